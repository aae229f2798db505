"""polypad remove-branching, and the conditionals section of polypad check."""

from __future__ import annotations

import polypad as pp
from polypad.cli import main

CONV = '''
@T.prim_func
def conv(A: T.Buffer((5, 4), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                B[io, ii] = 0.0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii >= 14:
                B[io, ii] = 0.0
'''

SELECT = '''
@T.prim_func
def pick(A: T.Buffer((16,), "float32"), F: T.Buffer((16,), "float32"),
         B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        T.assume(i < 14 or A[i] == 0.0)
    for i in T.serial(16):
        if i < 14:
            B[i] = A[i] * F[i]
        else:
            B[i] = 0.0
'''


def test_remove_branching_prints_the_rewritten_function_and_a_reason_per_conditional(
        tmp_path, capsys):
    path = tmp_path / "conv.py"
    path.write_text(CONV)
    assert main(["remove-branching", str(path)]) == 0
    out = capsys.readouterr().out
    comments = [line for line in out.splitlines() if line.startswith("# line")]
    assert len(comments) == 2
    assert comments[0].startswith("# line 7: if 4 * io + ii < 14: removed (proved by isl")
    assert "B_pad_value" in comments[0]
    assert comments[1].startswith("# line 13: if 4 * io + ii >= 14: kept")
    rewritten = pp.parse("\n".join(line for line in out.splitlines()
                                   if not line.startswith("#")))
    expected = pp.parse('''
@T.prim_func
def conv(A: T.Buffer((5, 4), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii >= 14:
                B[io, ii] = 0.0
''')
    pp.assert_structural_equal(rewritten, expected)


def test_strict_ieee_flag_keeps_what_only_the_reals_allow(tmp_path, capsys):
    path = tmp_path / "pick.py"
    path.write_text(SELECT)
    assert main(["remove-branching", str(path)]) == 0
    assert "if i < 14: removed" in capsys.readouterr().out
    assert main(["remove-branching", str(path), "--strict-ieee"]) == 0
    out = capsys.readouterr().out
    assert "if i < 14: kept (refuted" in out and "stored A[i] * F[i]=" in out


def test_check_says_for_every_conditional_whether_it_can_go(tmp_path, capsys):
    path = tmp_path / "conv.py"
    path.write_text(CONV)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    section = out.split("conditionals:\n", 1)[1].splitlines()
    assert section[0].startswith("line 7: if 4 * io + ii < 14: removable, keeping the then")
    assert section[1].startswith("line 13: if 4 * io + ii >= 14: ")
    assert "removable" not in section[1]
