"""The command line: check, build, demo, and errors on bad input."""

import subprocess
import sys
import textwrap

import pytest

from polypad.cli import main

KERNEL = textwrap.dedent('''
    from polypad import T

    @T.prim_func
    def scale(A: T.Buffer((14,), "float32"), B: T.Buffer((4, 4), "float32")):
        for i in T.serial(14):
            B[i // 4, i % 4] = 2.0 * A[i]

    @T.prim_func
    def other(C: T.Buffer((3,), "int32")):
        for k in T.serial(3):
            C[k] = k
''')


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    return path


def test_check_prints_buffers_domains_and_accesses(kernel_file, capsys):
    assert main(["check", str(kernel_file), "--func", "scale"]) == 0
    out = capsys.readouterr().out
    assert "function scale" in out and "function other" not in out
    assert "A[14]: float32  (parameter)" in out
    assert "B[4, 4]: float32  (parameter)" in out
    assert "0 <= i <= 13" in out
    # the write relation of B in isl notation, with floor semantics
    assert "B[o0, o1]" in out or "-> B[" in out


def test_check_never_runs_the_file(tmp_path, capsys):
    path = tmp_path / "evil.py"
    marker = tmp_path / "ran"
    path.write_text(f"open({str(marker)!r}, 'w').write('x')\n" + KERNEL)
    # top-level code is refused, with its location, and never executed
    assert main(["check", str(path)]) == 1
    assert f"{path}:1:1" in capsys.readouterr().err
    assert not marker.exists()


def test_build_prints_numba_source(kernel_file, capsys):
    assert main(["build", str(kernel_file), "--func", "other"]) == 0
    out = capsys.readouterr().out
    assert "def " in out and "C[" in out


def test_parse_error_is_reported_with_location(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(textwrap.dedent('''
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            while True:
                A[0] = 1.0
    '''))
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}:4:5" in err


def test_unknown_function_name_is_a_usage_error_listing_the_functions(kernel_file, capsys):
    assert main(["check", str(kernel_file), "--func", "nope"]) == 2
    err = capsys.readouterr().err
    assert err == f"polypad: {kernel_file} has no function named 'nope'; it has: scale, other\n"


def test_demo_runs_end_to_end_at_a_small_size():
    out = subprocess.run([sys.executable, "-m", "polypad.cli", "demo", "--rows", "64",
                          "--cols", "30", "--repeat", "1"],
                         capture_output=True, text=True, check=True).stdout
    assert "round trip structurally equal: True" in out
    assert "(ok)" in out
    assert "numpy a.sum(axis=1)" in out
    assert out.count("(ok)") == 2
    assert "unscheduled kernel:" in out and "scheduled kernel:" in out
    assert "why it is slow:" in out
    assert "sch.rfactor(loop='j_1', factor_axis=0)" in out
    assert "B_rf = numba.carray(_pp_stack_zeros(16, np.float32), (16,))" in out


def test_check_names_the_data_dependent_guard(tmp_path, capsys):
    path = tmp_path / "dd.py"
    path.write_text(textwrap.dedent('''
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            for i in T.serial(16):
                if A[i] < 0.0:
                    A[i] = 0.0
    '''))
    assert main(["check", str(path)]) == 0
    assert "(may: guard A[i] < 0.0 not modelled)" in capsys.readouterr().out
