"""The command line on hostile input: every failure is one line and a documented
exit code, never a traceback, and the kernel file is never run."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import polypad
import polypad.model
from polypad import cli
from polypad.cli import main

KERNEL = textwrap.dedent('''
    @T.prim_func
    def scale(A: T.Buffer((14,), "float32")):
        for i in T.serial(14):
            A[i] = 2.0 * A[i]
''')


def run_cli(capsys, *argv):
    """Exit code, stdout and stderr of one in-process run."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(err: str, *fragments: str) -> None:
    assert err.startswith("polypad: ") and err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


# ------------------------------------------------------------------ bad files

def test_missing_file(tmp_path, capsys):
    code, out, err = run_cli(capsys, "check", str(tmp_path / "nope.py"))
    assert code == cli.EXIT_USAGE == 2 and out == ""
    assert_one_line_error(err, "cannot read", "nope.py", "No such file or directory")


def test_directory(tmp_path, capsys):
    code, _, err = run_cli(capsys, "build", str(tmp_path))
    assert code == 2
    assert_one_line_error(err, f"{tmp_path} is a directory")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads any file")
def test_unreadable_file(tmp_path, capsys):
    path = tmp_path / "locked.py"
    path.write_text(KERNEL)
    path.chmod(0)
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2
    assert_one_line_error(err, "cannot read", "Permission denied")


def test_png_is_refused_as_binary(tmp_path, capsys):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2
    assert_one_line_error(err, "image.png is a binary file")


def test_bytes_that_are_not_utf8_name_the_offset(tmp_path, capsys):
    path = tmp_path / "noise.py"
    path.write_bytes(b"x = 1\n\xc3\x28\xff\xfe junk")
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2
    assert_one_line_error(err, "is not UTF-8 text", "byte 0xc3 at offset 6")


@pytest.mark.parametrize("content", ["", "\n   \n\t\n"])
def test_empty_file(tmp_path, capsys, content):
    path = tmp_path / "empty.py"
    path.write_text(content)
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2
    assert_one_line_error(err, "empty.py is empty")


def test_huge_file_is_refused_by_size(tmp_path, capsys):
    path = tmp_path / "huge.py"
    path.write_bytes(b"#" * (cli.MAX_INPUT_BYTES + 1))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2
    assert_one_line_error(err, "huge.py is larger than 10 MiB")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_endless_device_is_read_only_up_to_the_limit(capsys):
    code, _, err = run_cli(capsys, "check", "/dev/zero")
    assert code == 2
    assert_one_line_error(err, "larger than 10 MiB")


# ------------------------------------------------------------ encodings, BOM

def test_utf8_byte_order_mark_is_accepted(tmp_path, capsys):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + KERNEL.encode())
    code, out, err = run_cli(capsys, "check", str(path))
    assert (code, err) == (0, "")
    assert "function scale" in out and "0 <= i <= 13" in out


def test_parse_accepts_a_byte_order_mark_and_keeps_columns():
    assert polypad.parse("\ufeff" + KERNEL).name == "scale"
    bad = ("\ufeff@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n"
           "    while True:\n        pass\n")
    with pytest.raises(polypad.ParseError) as info:
        polypad.parse(bad, filename="k.py")
    assert (info.value.lineno, info.value.col) == (3, 5)


def test_coding_cookie_is_honoured(tmp_path, capsys):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + KERNEL.encode())
    code, out, _ = run_cli(capsys, "check", str(path))
    assert code == 0 and "function scale" in out


def test_byte_order_mark_contradicting_the_coding_line(tmp_path, capsys):
    path = tmp_path / "clash.py"
    path.write_bytes(b"\xef\xbb\xbf# coding: latin-1\n" + KERNEL.encode())
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == 2
    assert_one_line_error(err, "byte order mark", "another encoding")


# ------------------------------------------------- errors from polypad itself

def test_analysis_error_is_one_line_with_exit_code_1(tmp_path, capsys):
    path = tmp_path / "square.py"
    path.write_text(KERNEL.replace("A[i] = 2.0 * A[i]", "A[i * i % 14] = 1.0"))
    code, _, err = run_cli(capsys, "check", str(path))
    assert code == cli.EXIT_REFUSED == 1
    assert_one_line_error(err, "NotAffineError: ", "i * i", "is not quasi-affine")


def test_parse_error_keeps_its_source_line_and_caret(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = (1.0\n")
    code, _, err = run_cli(capsys, "build", str(path))
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith(f"polypad: {path}:3:") and "invalid syntax" in lines[0]
    assert lines[1].strip() == "A[0] = (1.0" and lines[2].strip() == "^"
    assert "Traceback" not in err


def test_unexpected_exception_is_an_internal_error(kernel_path, capsys, monkeypatch):
    def explode(func):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(polypad.model, "extract", explode)
    code, _, err = run_cli(capsys, "check", str(kernel_path))
    assert code == cli.EXIT_INTERNAL == 3
    assert_one_line_error(err, "internal error: RecursionError: maximum recursion depth",
                          "nested very deeply", "--traceback")

    code, _, err = run_cli(capsys, "check", "--traceback", str(kernel_path))
    assert code == 3
    assert err.startswith("Traceback (most recent call last):") and "in explode" in err
    assert err.splitlines()[-1].startswith("polypad: internal error: RecursionError")


def test_interrupt_exits_130(kernel_path, capsys, monkeypatch):
    def interrupt(func):
        raise KeyboardInterrupt

    monkeypatch.setattr(polypad.model, "extract", interrupt)
    code, _, err = run_cli(capsys, "check", str(kernel_path))
    assert (code, err) == (130, "polypad: interrupted\n")


def test_closed_stdout_in_process(kernel_path, monkeypatch):
    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["check", str(kernel_path)]) == cli.EXIT_BROKEN_PIPE == 141


def test_closed_pipe_ends_quietly(kernel_path):
    """`polypad check FILE | head`: the reader has gone before polypad writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader, from the start: the first write fails
    try:
        proc = subprocess.Popen([sys.executable, "-m", "polypad", "check", str(kernel_path)],
                                stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


# ------------------------------------------------------- usage, help, version

def test_usage_errors_exit_2(capsys):
    assert main([]) == 2
    assert "the following arguments are required: COMMAND" in capsys.readouterr().err
    assert main(["demo", "--rows", "0"]) == 2
    assert "expected a positive integer, got 0" in capsys.readouterr().err
    code, _, err = run_cli(capsys, "demo", "--rows", "100000", "--cols", "100000")
    assert code == 2
    assert_one_line_error(err, "the demo allows at most")


def test_version(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out == f"polypad {polypad.__version__}\n"


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["build", "--help"],
                                  ["demo", "--help"]])
def test_help_is_plain_text_with_exit_codes(capsys, argv):
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0
    assert out.startswith("usage: polypad")
    assert "``" not in out and ":func:" not in out and ":data:" not in out
    assert "exit codes:" in out
    for number in ("0 ", "1 ", "2 ", "3 ", "130", "141"):
        assert f"\n  {number}" in out
    if argv[0] in ("check", "build"):
        assert "never imported or run" in out and "--func NAME  only the function NAME" in out
    if argv[0] == "demo":
        assert "--rows ROWS      rows of A (default 4096)" in out


# ------------------------------------------------- the file is never executed

SIDE_EFFECT_HEADER = "import polypad_sidecar  # importing it writes the marker file\n"


@pytest.mark.parametrize("command", ["check", "build"])
def test_kernel_file_is_parsed_never_imported(tmp_path, command):
    """The kernel imports a module that writes a marker when imported; with that
    module importable, check and build still give the right output and no marker."""
    marker = tmp_path / "marker"
    (tmp_path / "polypad_sidecar.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    kernel = tmp_path / "kernel.py"
    kernel.write_text(SIDE_EFFECT_HEADER + KERNEL)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "polypad", command, str(kernel)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert (proc.returncode, proc.stderr) == (0, "")
    if command == "check":
        assert "function scale" in proc.stdout
        assert "domain: { S0[i] : 0 <= i <= 13 }" in proc.stdout
    else:
        assert proc.stdout.startswith("# function scale") and "A[i] = " in proc.stdout
    assert not marker.exists()


@pytest.mark.parametrize("command", ["check", "build"])
def test_top_level_code_is_refused_never_run(tmp_path, command):
    marker = tmp_path / "marker"
    kernel = tmp_path / "evil.py"
    kernel.write_text(f"open({str(marker)!r}, 'w').write('ran')\n" + KERNEL)
    proc = subprocess.run([sys.executable, "-m", "polypad", command, str(kernel)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"polypad: {kernel}:1:1: Expr syntax is not supported")
    assert "Traceback" not in proc.stderr
    assert not marker.exists()


@pytest.fixture
def kernel_path(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    return path


def test_readme_documents_the_same_exit_codes():
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme.split("## Command line", 1)[1].split("\n## ", 1)[0]
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", section, re.M)}
    assert documented == set(cli.EXIT_CODES)
