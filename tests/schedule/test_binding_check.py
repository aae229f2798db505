"""Every block's axis bindings stay in their domains after each schedule primitive.

With ``POLYPAD_VERIFY_PASSES`` set (tests/conftest.py sets it), a primitive
whose result binds a block axis outside its domain at an instance where the
block runs is refused with a :class:`~polypad.errors.BindingError` carrying
the value and the instance (:mod:`polypad.model.block_bindings`), and the
schedule stays as it was.  ``analyses.check_block_bindings`` asks the same of
any function.  The bad rewrites here are hand-built primitives of a
``Schedule`` subclass, so that the refusal is tested apart from any real
primitive's bugs.
"""

from __future__ import annotations

import numpy as np
import pytest

import analyses
import codegen
from analyses import Instance, Proved, Refuted, Unknown
from polypad.errors import BindingError, VerifyError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.model.block_axes import Violation
from polypad.schedule import Schedule
from polypad.schedule.state import primitive
from polypad.script import parse, script

SCALE = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * 2.0
'''

# 5 x 4 instances for 18 elements: T.where keeps vi below 18.
PREDICATED = '''
@T.prim_func
def f(A: T.Buffer((18,), "float32"), B: T.Buffer((18,), "float32")):
    for i, j in T.grid(5, 4):
        with T.block("B"):
            vi = T.axis.spatial(18, i * 4 + j)
            T.where(i * 4 + j < 18)
            B[vi] = A[vi] * 2.0
'''


def shifted(func: n.PrimFunc, block: str, by: int) -> n.PrimFunc:
    """``func`` with the first axis of ``block`` bound ``by`` further: ``vi = i + by``."""
    found = next(s for s in walk(func.body) if isinstance(s, n.Block) and s.name == block)
    let = found.body
    return replace(func, let, n.LetStmt(let.var, let.value + by, let.body))


class Shifting(Schedule):
    """A schedule with a primitive that moves a binding, right or wrong."""

    @primitive
    def shift(self, block: str, by: int = 1):
        return shifted(self.func, block, by)


def test_a_binding_moved_outside_its_domain_is_refused_with_the_instance():
    original = parse(SCALE)
    sch = Shifting(original)
    with pytest.raises(BindingError) as refused:
        sch.shift("B")
    err = refused.value
    assert isinstance(err, VerifyError)
    assert err.evidence == Violation(16, (("i", 15),))
    assert (err.primitive, err.block, err.axis) == ("shift", "B", "vi")
    assert str(err) == ("shift built a binding outside its axis domain from f: block 'B' "
                        "binds vi = i + 1 to 16 at i = 15, outside its domain [0, 16)")
    # Refused before it was installed: the schedule is as it was.
    assert sch.func is original and len(sch.trace) == 0


def test_the_predicate_limits_the_instances_checked():
    original = parse(PREDICATED)
    sch = Shifting(original)
    # Without T.where, i * 4 + j reaches 19; where it holds, 17: the block is fine.
    assert analyses.check_block_bindings(original) == Proved(
        "isl", "every block axis binding stays in its domain")
    with pytest.raises(BindingError) as refused:
        sch.shift("B", 1)
    # i * 4 + j = 17 passes the predicate and is bound to 18.
    assert refused.value.evidence == Violation(18, (("i", 4), ("j", 1)))
    assert sch.func is original


def test_a_binding_moved_inside_its_domain_is_installed():
    sch = Shifting(parse(SCALE.replace("range(16)", "range(15)")))
    sch.shift("B", 1)
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(15):
        with T.block("B"):
            vi = T.axis.spatial(16, i + 1)
            B[vi] = A[vi] * 2.0
'''))


def test_without_the_environment_variable_nothing_is_checked(monkeypatch):
    monkeypatch.delenv("POLYPAD_VERIFY_PASSES")
    sch = Shifting(parse(SCALE))
    sch.shift("B")
    assert analyses.check_block_bindings(sch.func) == Refuted(analyses.Counterexample(
        "block 'B' binds vi = i + 1 to 16, outside its domain [0, 16)",
        (Instance("B", {"i": 15}),), values={"vi": 16}))


# ---------------------------------------------------------------- the public decider


def test_the_decider_proves_a_parsed_function():
    assert analyses.check_block_bindings(parse(SCALE)) == Proved(
        "isl", "every block axis binding stays in its domain")


def test_the_decider_refutes_a_hand_built_function_with_the_parameters():
    # Over a symbolic extent: vj = j + 1 leaves [0, n) at the last j, for every n >= 1.
    func = parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((n,), "float32")):
    for j in range(n):
        with T.block("A"):
            vj = T.axis.spatial(n, j)
            A[vj] = 1.0
''')
    decided = analyses.check_block_bindings(shifted(func, "A", 1))
    assert decided == Refuted(analyses.Counterexample(
        "block 'A' binds vj = j + 1 to 1, outside its domain [0, n)",
        (Instance("A", {"j": 0}),), params={"n": 1}, values={"vj": 1}))


TAIL = """
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32")):
    if n >= 0:
        for j in range(n % 8):
            with T.block("A"):
                vj = T.axis.spatial(n, j + n // 8 * 8)
                A[vj] = 1.0
"""


def test_the_context_counts_enclosing_conditions_and_buffer_sizes():
    # A partition's tail: inside [0, n) only where n >= 0 (n % 8 > 0 for n < 0).
    guarded = parse(TAIL)
    assert isinstance(analyses.check_block_bindings(guarded), Proved)
    # A buffer's symbolic size is never negative: no guard needed.
    sized = parse(TAIL.replace("n: T.int32, A: T.Buffer((64,), ", 'A: T.Buffer(("n",), ')
                  .replace("    if n >= 0:\n", "").replace("\n    ", "\n"))
    assert isinstance(analyses.check_block_bindings(sized), Proved)
    # Without the guard (hand-built: the parser refuses that text), a negative n runs
    # the tail; isl's first instance takes the smallest n.
    guard = guarded.body
    unguarded = replace(guarded, guard, guard.then_case)
    decided = analyses.check_block_bindings(unguarded)
    assert decided == Refuted(analyses.Counterexample(
        "block 'A' binds vj = j + n // 8 * 8 to -2147483648, outside its domain [0, n)",
        (Instance("A", {"j": 0}),), params={"n": -2147483647}, values={"vj": -2147483648}))


def test_a_data_dependent_binding_is_unknown():
    func = parse('''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), I: T.Buffer((16,), "int32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, I[i])
            A[vi] = 1.0
''')
    decided = analyses.check_block_bindings(func)
    assert isinstance(decided, Unknown)
    assert "block 'B', axis vi: cannot decide" in decided.reason


# ---------------------------------------------------------------- good schedules pass


TWO = '''
@T.prim_func
def f(A: T.Buffer((14,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((14,), "float32")
    for i in range(14):
        with T.block("B"):
            vi = T.axis.spatial(14, i)
            B[vi] = A[vi] * 2.0
    for i in range(14):
        with T.block("C"):
            vi = T.axis.spatial(14, i)
            C[vi] = B[vi] + 1.0
'''


def test_a_split_and_compute_at_pass_under_their_guard():
    # C's vi = i_0 * 4 + i_1 reaches 15 over the loops; the guard keeps it below 14.
    original = parse(TWO)
    sch = Schedule(original)
    outer, _ = sch.split(sch.get_loops("C")[0], [None, 4])
    sch.compute_at("B", outer)
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((14,), "float32"), C: T.Buffer((14,), "float32")):
    B = T.alloc_buffer((14,), "float32")
    for i_0 in T.serial(4):
        with T.block("B"):
            for i in T.serial(4 * i_0, 4 * i_0 + T.if_then_else(i_0 == 3, 2, 4)):
                B[i] = A[i] * 2.0
        for i_1 in T.serial(4):
            if i_0 * 4 + i_1 < 14:
                with T.block("C"):
                    vi = T.axis.spatial(14, i_0 * 4 + i_1)
                    C[vi] = B[vi] + 1.0
'''))
    assert isinstance(analyses.check_block_bindings(sch.func), Proved)
    _runs_the_same(original, sch.func, _padded_inputs(original))


# ---------------------------------------------------------------- split with tail="pad"

# What transform_layout makes of a 14-element block padded to 4 x 4.
PADDED_LAYOUT = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for io in T.serial(4):
        for ii in T.serial(4):
            T.assume(4 * io + ii < 14 or A[io, ii] == 0.0)
    for i in T.serial(14):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi // 4, vi % 4] = A[vi // 4, vi % 4] * 2.0
    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("B_padding"):
                if 4 * io + ii >= 14:
                    B[io, ii] = 0.0
'''


def _padded_inputs(func: n.PrimFunc, **scalars) -> list:
    """Seeded inputs whose padding (A's last two elements) holds 0, as assumed."""
    rng = np.random.default_rng(1)
    out = []
    for p in func.params:
        if isinstance(p, n.Buffer):
            a = rng.integers(-9, 9, p.shape).astype(p.dtype)
            if p.shape == (4, 4):
                a[3, 2:] = 0
            out.append(a)
        else:
            out.append(scalars[p.name])
    return out


def _runs_the_same(before: n.PrimFunc, after: n.PrimFunc, inputs: list) -> None:
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]
    codegen.build(before, target="python")(*want)
    for target in ("python", "numba"):
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in inputs]
        codegen.build(after, target=target)(*got)
        for w, g in zip(want, got, strict=True):
            if isinstance(w, np.ndarray):
                np.testing.assert_array_equal(g, w, err_msg=target)


def test_a_padded_split_widens_the_block_axis_domain():
    # Before the fix the padded nest ran the block at i_0 * 4 + i_1 = 14 and 15 with
    # vi still declared in [0, 14): "split built a binding outside its axis domain
    # from f: block 'B' binds vi = i_0 * 4 + i_1 to 14 at i_0 = 3, i_1 = 2".
    original = parse(PADDED_LAYOUT)
    sch = Schedule(original)
    assert sch.split("i", [None, 4], tail="pad") == ["i_0", "i_1"]
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for io in T.serial(4):
        for ii in T.serial(4):
            T.assume(4 * io + ii < 14 or A[io, ii] == 0.0)
    for i_0 in T.serial(4):
        for i_1 in T.serial(4):
            with T.block("B"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                B[vi // 4, vi % 4] = A[vi // 4, vi % 4] * 2.0
    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("B_padding"):
                if 4 * io + ii >= 14:
                    B[io, ii] = 0.0
'''))
    assert_structural_equal(parse(script(sch.func)), sch.func)
    assert isinstance(analyses.check_block_bindings(sch.func), Proved)
    _runs_the_same(original, sch.func, _padded_inputs(original))


def test_a_padded_split_of_a_symbolic_loop_widens_to_the_padded_extent():
    # B is written again after the block, so the extra iterations change nothing.
    original = parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.assume(0 <= n and n <= 60)
    for i in T.serial(n):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * 2.0
    for j in T.serial(64):
        with T.block("C"):
            vj = T.axis.remap("S", [j])
            B[vj] = 1.0
''')
    sch = Schedule(original)
    sch.split("i", [None, 4], tail="pad")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.assume(0 <= n and n <= 60)
    for i_0 in T.serial((n + 3) // 4):
        for i_1 in T.serial(4):
            with T.block("B"):
                vi = T.axis.spatial(((n + 3) // 4 - 1) * 4 + 4, i_0 * 4 + i_1)
                B[vi] = A[vi] * 2.0
    for j in T.serial(64):
        with T.block("C"):
            vj = T.axis.remap("S", [j])
            B[vj] = 1.0
'''))
    assert_structural_equal(parse(script(sch.func)), sch.func)
    for size in (0, 1, 13, 60):
        _runs_the_same(original, sch.func, _padded_inputs(original, n=size))


# ---------------------------------------------------------------- the context: T.assume


def test_an_assumption_before_the_block_counts():
    # split proves n >= 0 from the T.assume and gives the tail n % 8 iterations, not
    # T.max(n, 0) % 8; its binding is inside [0, n) only because n >= 0.  Before the
    # check counted the assumption it refused the split: "binds vi = i_1_tail + n // 8
    # * 8 to -2147483648 at i_1_tail = 0, n = -2147483647".
    original = parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32")):
    T.assume(0 <= n)
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi % 64] = A[vi % 64] + 1.0
''')
    sch = Schedule(original)
    sch.split("i", [None, 8], tail="partition")
    assert_structural_equal(sch.func, parse('''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32")):
    T.assume(0 <= n)
    for i_0, i_1 in T.grid(n // 8, 8):
        with T.block("A"):
            vi = T.axis.spatial(n, i_0 * 8 + i_1)
            A[vi % 64] = A[vi % 64] + 1.0
    for i_1_tail in T.serial(n % 8):
        with T.block("A"):
            vi = T.axis.spatial(n, i_1_tail + n // 8 * 8)
            A[vi % 64] = A[vi % 64] + 1.0
'''))
    assert_structural_equal(parse(script(sch.func)), sch.func)
    assert isinstance(analyses.check_block_bindings(sch.func), Proved)
    for size in (0, 5, 8, 70):
        _runs_the_same(original, sch.func, _padded_inputs(original, n=size))
