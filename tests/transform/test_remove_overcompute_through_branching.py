"""remove_overcompute_through_branching: RFC 0077's four steps, other sizes, 2-D, refusals.

Checked three ways: the IR after each step against the RFC's text (tests/examples/rfc0077/
branching_conv1d_step1..4.py) or expected IR in script syntax; the function before and
after run on the same random inputs in the reference executor and as Numba kernels; and,
where nothing may change, the pass returning its input and the analysis's exact
counterexample.
"""

from __future__ import annotations

import functools

import islpy as isl
import numpy as np
import pytest
from fuzz_programs import Draws, NestOptions, nest_program
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inputs_support import make_inputs
from pass_support import assert_same_results, checked, load

import codegen
from analyses import Refuted
from analyses.padding_writes import pad_value_overwrites
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import Rewriter, walk
from polypad.model import AffineSpace, to_set
from polypad.script import parse
from polypad.transform import (
    STEPS,
    introduce_padding_conditionals,
    remove_overcompute_through_branching,
)

RFC = "branching_conv1d"


class _StripBlocks(Rewriter):
    """The RFC's step texts drop the blocks of the function they start from."""

    def visit_Block(self, node: n.Block):
        return self.visit(node.body)

    def visit_SeqStmt(self, node: n.SeqStmt):
        out = []
        for s in (self.visit(s) for s in node.stmts):
            out.extend(s.stmts if isinstance(s, n.SeqStmt) else (s,))
        return n.SeqStmt(tuple(out))


class _PassToNot(Rewriter):
    """``if c: pass else: X`` (the RFC's step 3) as ``if not c: X`` (how remove_no_op
    leaves an emptied then-branch)."""

    def visit_IfThenElse(self, node: n.IfThenElse):
        node = self.generic_visit(node)
        if node.then_case == n.SeqStmt(()) and node.else_case is not None:
            return n.IfThenElse(n.Not(node.condition), node.else_case)
        return node


def strip_blocks(f: n.PrimFunc) -> n.PrimFunc:
    return _StripBlocks().visit(f)


@functools.cache
def rfc_steps(block: str | None) -> tuple[n.PrimFunc, ...]:
    """The RFC's function and the function after each of the four steps (verified)."""
    out = [load(f"{RFC}_before")]
    for step in STEPS:
        out.append(checked(step(out[-1], block=block)))
    return tuple(out)


# ---------------------------------------------------------------- the RFC's example


@pytest.mark.parametrize("block", ["compute", None])
@pytest.mark.parametrize("k", [1, 2])
def test_rfc_steps_1_and_2_are_the_rfc_text(block, k):
    assert_structural_equal(strip_blocks(rfc_steps(block)[k]), load(f"{RFC}_step{k}"))


@pytest.mark.parametrize("block", ["compute", None])
def test_rfc_step_3_is_the_rfc_text_with_if_not(block):
    # The RFC writes step 3 as `if c: pass else: X`; remove_no_op leaves `if not c: X`.
    got = strip_blocks(rfc_steps(block)[3])
    assert_structural_equal(got, _PassToNot().visit(load(f"{RFC}_step3")))


def test_rfc_step_4_is_the_rfc_text_up_to_the_spelling_of_the_condition():
    got = rfc_steps("compute")[4]
    want = load(f"{RFC}_step4")
    ours = got.body.stmts[0].body.body.body.condition
    theirs = want.body.stmts[0].body.body.condition
    # simplify keeps `not (io == 3 and ii >= 2)`; the RFC writes
    # `io < 3 or (io == 3 and ii < 2)`.  ISL: the same set of (io, ii) in the 4 x 4 loops.
    io, ii = [loop.var for loop in walk(got.body) if isinstance(loop, n.For)][:2]
    space = AffineSpace((io, ii))
    box = to_set(n.And(n.And(io >= 0, io < 4), n.And(ii >= 0, ii < 4)), space)
    assert to_set(ours, space).intersect(box).is_equal(
        _as(theirs, want, (io, ii), space).intersect(box))
    assert not to_set(ours, space).intersect(box).is_equal(box)
    # With the RFC's spelling put in, the rest is the RFC's text.
    respelled = _Recondition(ours, theirs, want, (io, ii)).visit(got)
    assert_structural_equal(strip_blocks(respelled), want)


def _as(cond: n.Expr, func: n.PrimFunc, vars_, space) -> isl.Set:
    """``cond`` (over ``func``'s first two loop variables) as a set over ``vars_``."""
    from polypad.ir.substitute import substitute

    theirs = [loop.var for loop in walk(func.body) if isinstance(loop, n.For)][:2]
    return to_set(substitute(cond, dict(zip(theirs, vars_))), space)


class _Recondition(Rewriter):
    def __init__(self, old, new, func, vars_):
        from polypad.ir.substitute import substitute

        theirs = [loop.var for loop in walk(func.body) if isinstance(loop, n.For)][:2]
        self.old, self.new = old, substitute(new, dict(zip(theirs, vars_)))

    def visit_IfThenElse(self, node):
        node = self.generic_visit(node)
        if node.condition is self.old:
            return n.IfThenElse(self.new, node.then_case, node.else_case)
        return node


RFC_AFTER = """
@T.prim_func
def func(A: T.Buffer((4, 4), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            if not (io == 3 and ii >= 2):
                B[io, ii] = 0.0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
"""


@pytest.mark.parametrize("block", ["compute", None])
def test_rfc_pass_is_its_four_steps(block):
    got = checked(remove_overcompute_through_branching(load(f"{RFC}_before"), block=block))
    assert_structural_equal(got, rfc_steps(block)[4])
    assert_structural_equal(got, parse(RFC_AFTER))


def rfc_args(seed: int) -> list:
    return make_inputs(load("overcompute_conv1d_sequential"), np.random.default_rng(seed))


def test_rfc_result_computes_what_the_branching_function_did():
    # The RFC's input reads A[4, _] past A in the padding, so it cannot run (see
    # test_rfc_examples); the function it came from, with the branch, is the reference.
    reference = codegen.build(load("overcompute_conv1d_sequential"), target="python")
    got = codegen.build(rfc_steps("compute")[4], target="python")
    for seed in range(3):
        _same(reference, got, rfc_args(seed))


@pytest.mark.numba
def test_rfc_result_in_numba():
    args = rfc_args(7)
    _same(kernel("rfc", "before"), kernel("rfc", "after"), args)
    _same(codegen.build(load("overcompute_conv1d_sequential"), target="python"),
          kernel("rfc", "after"), args)


def _same(before, after, args: list) -> None:
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    before(*want)
    after(*got)
    for k, (a, b) in enumerate(zip(want, got, strict=True)):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5, err_msg=f"argument {k}")


# ---------------------------------------------------------------- other shapes

CONV = """
@T.prim_func
def func(A: T.Buffer(({rows_a}, {c}), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer(({rows}, {c}), "float32")):
    with T.block("compute"):
        for io, ii in T.grid({rows}, {c}):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // {c}, (ii + f) % {c}] * F[f]
    with T.block("B_pad_value"):
        for io, ii in T.grid({rows}, {c}):
            if {padding}:
                B[io, ii] = {pad}
"""

AFTER_CONV = """
@T.prim_func
def func(A: T.Buffer(({rows_a}, {c}), "float32"), F: T.Buffer((3,), "float32"),
         B: T.Buffer(({rows}, {c}), "float32")):
    with T.block("compute"):
        for io, ii in T.grid({rows}, {c}):
            if not ({kept}):
                B[io, ii] = 0.0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + A[io + (ii + f) // {c}, (ii + f) % {c}] * F[f]
    with T.block("B_pad_value"):
        for io, ii in T.grid({rows}, {c}):
            if {padding}:
                B[io, ii] = {pad}
"""

MATMUL = """
@T.prim_func
def func(A: T.Buffer((6, 4), "float32"), W: T.Buffer((4, 8), "float32"),
         C: T.Buffer((6, 8), "float32")):
    with T.block("compute"):
        for i, j in T.grid(6, 8):
            C[i, j] = 0.0
            for k in T.serial(4):
                C[i, j] = C[i, j] + A[i, k] * W[k, j]
    with T.block("C_pad_value"):
        for i, j in T.grid(6, 8):
            if i >= 5 or j >= 7:
                C[i, j] = 0.0
"""

SYMBOLIC = """
@T.prim_func
def func(n: T.int32, A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    T.assume(n >= 0 and n <= 16)
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = A[io, ii] * 2.0 + A[io + 1, ii]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if {cond}:
                B[io, ii] = 0.0
"""

READ_BETWEEN = """
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32"),
         C: T.Buffer((4,), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                {if_kept}B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("read"):
        {read}
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
"""

NESTED = """
@T.prim_func
def func(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for io in T.serial(4):
        with T.block("compute"):
            for ii in T.serial(4):
                {guard}B[io, ii] = A[io + 1, ii] * 2.0
                {indent}B[io, ii] = B[io, ii] + 1.0
    for io, ii in T.grid(4, 4):
        with T.block("B_pad_value"):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
"""

CASES = {
    # name: (before, expected after)
    "conv18_pad1": (  # 18 outputs in (5, 4): padding (4, 2..3), pad value 1.0
        CONV.format(rows_a=6, rows=5, c=4, padding="io == 4 and ii >= 2", pad="1.0"),
        AFTER_CONV.format(rows_a=6, rows=5, c=4, kept="io == 4 and ii >= 2",
                          padding="io == 4 and ii >= 2", pad="1.0")),
    "conv14_by_8": (  # factor 8: padding 8 * io + ii >= 14, pad value -1.0
        CONV.format(rows_a=3, rows=2, c=8, padding="8 * io + ii >= 14", pad="-1.0"),
        AFTER_CONV.format(rows_a=3, rows=2, c=8, kept="io == 1 and ii >= 6",
                          padding="8 * io + ii >= 14", pad="-1.0")),
    "matmul_2d": (  # 5 x 7 result in (6, 8): a last row and a last column of padding
        MATMUL,
        MATMUL.replace("            C[i, j] = 0.0\n            for k in T.serial(4):\n"
                       "                C[i, j] = C[i, j] + A[i, k] * W[k, j]",
                       "            if not (j == 7 or i == 5):\n                C[i, j] = 0.0\n"
                       "                for k in T.serial(4):\n"
                       "                    C[i, j] = C[i, j] + A[i, k] * W[k, j]")),
    "block_in_a_loop": (  # the block is inside the loop over io; two stores in a row
        NESTED.format(guard="", indent=""),
        NESTED.format(guard="if not (io == 3 and ii >= 2):\n                    ",
                      indent="    ")),
    "symbolic_n": (  # the padding depends on a scalar parameter
        SYMBOLIC.format(cond="4 * io + ii >= n"),
        SYMBOLIC.format(cond="4 * io + ii >= n").replace(
            "            B[io, ii] = A[io, ii] * 2.0",
            "            if not 4 * io + ii >= n:\n                B[io, ii] = A[io, ii] * 2.0")),
    "read_of_one_padding_element": (  # B[3, 3] is read before the pad value: B[3, 2] only
        READ_BETWEEN.format(if_kept="", read="C[0] = B[3, 3]"),
        READ_BETWEEN.format(if_kept="", read="C[0] = B[3, 3]").replace(
            "        for io, ii in T.grid(4, 4):\n            B[io, ii] = 0.0\n"
            "            for f in T.serial(3):\n                B[io, ii] = B",
            "        for io, ii in T.grid(4, 4):\n            if not (ii == 2 and io == 3):\n"
            "                B[io, ii] = 0.0\n                for f in T.serial(3):\n"
            "                    B[io, ii] = B")),
}


@functools.cache
def case(name: str, which: str) -> n.PrimFunc:
    before, after = CASES[name]
    if which == "before":
        return parse(before)
    if which == "after":
        return parse(after)
    return checked(remove_overcompute_through_branching(case(name, "before"), block="compute"))


@functools.cache
def kernel(name: str, which: str):
    if name == "rfc":
        return codegen.build(load(f"{RFC}_step4") if which == "before"
                             else rfc_steps("compute")[4])
    return codegen.build(case(name, which))


@pytest.mark.parametrize("name", sorted(CASES))
def test_expected_ir(name):
    assert_structural_equal(case(name, "got"), case(name, "after"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_results_in_the_reference_executor(name):
    before = codegen.build(case(name, "before"), target="python")
    after = codegen.build(case(name, "got"), target="python")
    rng = np.random.default_rng(11)
    for _ in range(4):
        _same(before, after, make_inputs(case(name, "before"), rng))


@pytest.mark.numba
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_results_in_numba(name):
    args = make_inputs(case(name, "before"), np.random.default_rng(12))
    _same(kernel(name, "before"), kernel(name, "got"), args)


@pytest.mark.parametrize("size, factor", [(14, 4), (18, 4), (14, 8), (10, 3), (7, 2), (9, 9)])
def test_any_size_the_kept_instances_are_the_logical_ones(size, factor):
    rows = -(-size // factor)
    f = parse(CONV.format(rows_a=rows + 1, rows=rows, c=factor,
                          padding=f"{factor} * io + ii >= {size}", pad="0.0"))
    got = checked(remove_overcompute_through_branching(f, block="compute"))
    ifs = [x for x in walk(got.body) if isinstance(x, n.IfThenElse)]
    if size % factor == 0:  # no padding: nothing to do
        assert got is f
        return
    assert len(ifs) == 2 and ifs[0].else_case is None  # the compute guard, the pad block
    io, ii = [x.var for x in walk(got.body) if isinstance(x, n.For)][:2]
    space = AffineSpace((io, ii))
    box = to_set(n.And(n.And(io >= 0, io < rows), n.And(ii >= 0, ii < factor)), space)
    logical = to_set(factor * io + ii < size, space)
    assert to_set(ifs[0].condition, space).intersect(box).is_equal(logical.intersect(box))
    before = codegen.build(f, target="python")
    after = codegen.build(got, target="python")
    _same(before, after, make_inputs(f, np.random.default_rng(size)))


def test_symbolic_padding_for_every_n():
    before = codegen.build(case("symbolic_n", "before"), target="python")
    after = codegen.build(case("symbolic_n", "got"), target="python")
    rng = np.random.default_rng(3)
    for size in range(17):
        args = make_inputs(case("symbolic_n", "before"), rng)
        _same(before, after, [size, *args[1:]])


# ---------------------------------------------------------------- nothing to do


@pytest.mark.parametrize("read, pad", [
    ("for ii in T.serial(4):\n            C[ii] = B[3, ii]", True),  # reads the padding
    ("C[0] = B[0, 0]", False),  # no pad-value store at all
])
def test_nothing_to_do_leaves_the_function(read, pad):
    """Step 1 introduces nothing -- a read of the padding comes before the pad value,
    or nothing stores a pad value -- and the pass returns its input (the exact
    counterexamples are in tests/analyses/test_padding_writes.py)."""
    text = READ_BETWEEN.format(if_kept="", read=read)
    if not pad:
        text = text[:text.index('    with T.block("B_pad_value")')]
    f = parse(text)
    assert introduce_padding_conditionals(f, block="compute") is f
    assert remove_overcompute_through_branching(f, block="compute") is f
    assert remove_overcompute_through_branching(f) is f
    assert isinstance(pad_value_overwrites(f, "compute").decision, Refuted)


def test_only_the_named_block_changes():
    """With ``block``, steps 2-4 stay inside it: the always-true `if i < 10` of block
    `read` stays, which the whole-function pass simplifies away."""
    f = parse(READ_BETWEEN.format(if_kept="", read="""for i in T.serial(4):
            if i < 10:
                C[i] = B[3, 3]"""))

    def read_block(g):
        return next(x for x in walk(g.body) if isinstance(x, n.Block) and x.name == "read")

    in_block = checked(remove_overcompute_through_branching(f, block="compute"))
    assert in_block is not f and read_block(in_block) is read_block(f)
    everywhere = checked(remove_overcompute_through_branching(f))
    assert not any(isinstance(x, n.IfThenElse) for x in walk(read_block(everywhere)))
    compute = next(x for x in walk(in_block.body) if isinstance(x, n.Block))
    assert_structural_equal(compute, next(x for x in walk(everywhere.body)
                                          if isinstance(x, n.Block)))


def test_a_budget_that_runs_out_leaves_the_function():
    f = load(f"{RFC}_before")
    assert remove_overcompute_through_branching(f, block="compute", budget=1e-9) is f


# ---------------------------------------------------------------- random loop nests


@st.composite
def padded_nests(draw):
    """A random nest of tests/fuzz_programs.py (as in test_pass_properties), followed by
    pad-value stages: constants stored to a random corner of ``B`` and tail of ``A``."""
    nest = nest_program(Draws(draw), NestOptions(5))
    r0, r1, tail = draw(st.integers(0, 4)), draw(st.integers(0, 4)), draw(st.integers(0, 8))
    join = draw(st.sampled_from(["and", "or"]))
    value = draw(st.integers(-3, 3))
    pad = (f"    for p0, p1 in T.grid(4, 4):\n        if p0 >= {r0} {join} p1 >= {r1}:\n"
           f"            B[p0, p1] = {value}\n"
           f"    for p in T.serial(8):\n        if p >= {tail}:\n            A[p] = {value}\n")
    return parse(nest.text + pad), nest.n_range, nest.a0


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(padded_nests())
def test_random_loop_nests_keep_their_results(nest):
    """Whatever the pass finds in a random nest before pad-value stages (about one nest
    in four changes), the reference executor sees the same buffers."""
    f, n_range, a0 = nest
    got = checked(remove_overcompute_through_branching(f))
    for seed in range(3):
        rng = np.random.default_rng(seed)
        a = rng.integers(-4, 5, 8).astype("int32")
        b = rng.integers(-4, 5, (4, 4)).astype("int32")
        if a0 is not None:
            a[0] = a0
        assert_same_results(f, got, [a, b, int(rng.integers(*n_range))])
