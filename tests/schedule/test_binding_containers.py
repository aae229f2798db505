"""Block bindings are checked under every statement that holds others.

A block under a buffer view (``T.decl_buffer``), an annotation (``T.attr``)
or after an ``assert`` was once left unchecked: the parser let a binding
outside its domain through, ``analyses.check_block_bindings`` answered
Unknown, and the ``T.reads``/``T.writes`` check raised a ``KeyError``.
Neither statement changes a binding or where a block runs; an ``assert c``
holds after it, as a ``T.assume(c)`` does, and nothing after a ``return`` runs.
"""

from __future__ import annotations

import pytest

import analyses
from analyses import Instance, Proved, Refuted
from polypad.errors import BindingError, ParseError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk
from polypad.model.block_axes import Violation
from polypad.schedule import Schedule
from polypad.schedule.state import primitive
from polypad.script import parse

PROVED = Proved("isl", "every block axis binding stays in its domain")

VIEW = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    B = T.decl_buffer((4, 4), "float32", data=A.data)
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi // 4, vi % 4] = 1.0
'''

ANNOTATED = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    with T.attr(0, "pragma_unroll", 1):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                A[vi] = 1.0
'''

# Both at once, nested: a view under an annotation, the block two levels down.
BOTH = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    with T.attr(0, "pragma_x", 1):
        B = T.decl_buffer((16,), "float32", data=A.data)
        for i, j in T.grid(4, 4):
            with T.block("B"):
                vi = T.axis.spatial(16, i * 4 + j)
                B[vi] = 2.0
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


@pytest.mark.parametrize("text", [VIEW, ANNOTATED], ids=["decl_buffer", "attr"])
def test_a_block_under_a_view_or_an_annotation_is_decided_both_ways(text):
    func = parse(text)
    assert analyses.check_block_bindings(func) == PROVED
    assert analyses.check_block_bindings(shifted(func, "B", 1)) == Refuted(
        analyses.Counterexample(
            "block 'B' binds vi = i + 1 to 16, outside its domain [0, 16)",
            (Instance("B", {"i": 15}),), values={"vi": 16}))


def test_a_block_two_containers_down_is_refuted_at_its_first_bad_instance():
    func = parse(BOTH)
    assert analyses.check_block_bindings(func) == PROVED
    assert analyses.check_block_bindings(shifted(func, "B", 2)) == Refuted(
        analyses.Counterexample(
            "block 'B' binds vi = i * 4 + j + 2 to 16, outside its domain [0, 16)",
            (Instance("B", {"i": 3, "j": 2}),), values={"vi": 16}))


def test_a_primitive_that_breaks_a_binding_under_a_view_is_refused():
    original = parse(VIEW)
    sch = Shifting(original)
    with pytest.raises(BindingError) as refused:
        sch.shift("B")
    assert refused.value.evidence == Violation(16, (("i", 15),))
    assert (refused.value.block, refused.value.axis) == ("B", "vi")
    assert sch.func is original


def test_the_parser_refuses_a_bad_binding_under_a_view():
    # Accepted before: the check never reached the block.
    with pytest.raises(ParseError, match=r"binds vi to 16 at i = 16, outside its "
                                         r"domain \[0, 16\)"):
        parse(VIEW.replace("range(16)", "range(20)"))


def test_the_declared_regions_are_checked_under_a_view():
    # A KeyError from the region check before.
    text = VIEW.replace("vi = T.axis.spatial(16, i)\n",
                        "vi = T.axis.spatial(16, i)\n            T.writes(A[0:2])\n")
    text = text.replace("B[vi // 4, vi % 4] = 1.0", "A[vi] = 1.0")
    with pytest.raises(ParseError, match=r"block 'B' writes A\[2\] \(at i = 2\), which its "
                                         r"T.writes does not declare"):
        parse(text)


ASSERTED = '''
@T.prim_func
def f(n: T.int32, A: T.Buffer((64,), "float32")):
    assert n >= 0, "n is a size"
    for j in range(n % 8):
        with T.block("A"):
            vj = T.axis.spatial(n, j + n // 8 * 8)
            A[vj] = 1.0
'''


def test_an_assert_before_the_block_is_a_fact_there():
    # A partition's tail: inside [0, n) only where n >= 0, which the assert says.
    func = parse(ASSERTED)
    assert analyses.check_block_bindings(func) == PROVED
    # Without it a negative n runs the tail, outside the domain.
    unasserted = replace(func, func.body, func.body.stmts[1])
    decided = analyses.check_block_bindings(unasserted)
    assert isinstance(decided, Refuted)
    assert decided.counterexample.params == {"n": -2147483647}


def test_nothing_after_a_return_runs():
    func = parse(VIEW)
    bad = shifted(func, "B", 1)
    view = bad.body
    stopped = replace(bad, view, n.DeclBuffer(view.buffer, n.SeqStmt((
        n.Return(n.IntImm(0, "int32")), view.body))))
    assert analyses.check_block_bindings(stopped) == PROVED
