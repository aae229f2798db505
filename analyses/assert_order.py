"""No statement with an effect moves across an ``assert``: the order the dataflow keeps.

A plain ``assert c, msg`` (:func:`polypad.ir.opaque.is_plain_check`) writes
nothing, but it may raise, and then the function stops: the stores before it
have happened and the ones after it have not.  A new order that moved a store
across it would leave other buffer contents behind a failed assert (or raise
where the original did not, when the assert reads a let that loads).  So the
dependences (:mod:`.dataflow`) hold every assert instance in place against
every statement with an effect, in both directions, through one pseudo-location
``assert_order[]`` that is no buffer:

* each assert instance *writes* it (so the asserts keep their order: output
  dependences), and
* each store instance *reads* it (so a store stays after the last assert
  before it -- a flow dependence -- and before the first assert after it --
  an anti dependence).

What is ordered, exactly: model statements, each as a whole.  A store
statement's loads run with it, so they are ordered with it: no load moves
above an assert either (the assert is a fact for the load's bounds,
:func:`analyses.bounds_precondition`, and where it fails no load after it
ran).  Two stores both read it, so it orders no store against another: loops
on one side of an assert reorder, tile, merge and fuse as before.  A
``T.assume`` has no effect and takes no part.  A rewrite that separates
loads from their statement is not seen here and checks itself:
``cache_read(..., at=loop)``, whose copy-in loads at the start of each
iteration, refuses to load before an assert that came before the load
(:mod:`polypad.schedule.cache_at`).  Every legality check built on the
dependences (order, merge, compute location, loop kinds) sees these pairs
without a case of its own.  A loop holding an assert instance per iteration
carries the pseudo-location's dependences, so ``parallel`` and
``vectorize`` refuse it (the Numba target runs such a loop serially too);
a loop whose iterations hold no assert is not affected.

Where an assert fails the call ends, and the caller sees every buffer it did
not allocate: so each assert instance also reads those buffers as ``END``
does (:func:`.flow_inputs.assert_reads`), and a store whose value an assert
may leave behind is live out there -- not dead for being overwritten after the
assert (:func:`analyses.is_no_op`, ``remove_no_op``).

The pseudo-location's pairs are left out of a question limited to some buffers or elements
(``Dependences(model, buffers=...)``, ``about=...``): such questions are about
those buffers' values; :func:`polypad.schedule.legality.check_order` asks the
whole question when the statement it moves holds an assert.
"""

from __future__ import annotations

import islpy as isl

from polypad.ir.opaque import check_text
from polypad.model import Model, StatementModel
from polypad.model.isl_helpers import empty_union_map, union_all
from polypad.model.model import ASSERT_ORDER

from .evidence import Element, Instance

#: The ISL tuple of the pseudo-location, reserved in every model's buffer names.
ORDER = ASSERT_ORDER


def has_asserts(model: Model) -> bool:
    """Whether ``model`` holds an assert, and so the pseudo-location."""
    return any(s.is_assert for s in model.statements)


def _touch(s: StatementModel) -> isl.Map:
    """``S[i] -> assert_order[]`` on the instances of ``s``."""
    return isl.Map.from_domain(s.domain).set_tuple_name(isl.dim_type.out, ORDER)


def order_accesses(model: Model) -> tuple[isl.UnionMap, isl.UnionMap, isl.UnionMap,
                                          isl.UnionMap]:
    """The pseudo-location's accesses: (must writes, may writes, reads, must reads).

    Asserts write, stores read; an instance set that over-approximates (a guard
    dropped: ``may``) makes a may access.  All four are empty without an assert.
    """
    if not has_asserts(model):
        empty = empty_union_map()
        return empty, empty, empty, empty
    asserts = [s for s in model.statements if s.is_assert]
    stores = [s for s in model.statements if s.is_store]
    must_w = union_all(_touch(s) for s in asserts if not s.may)
    may_w = union_all(_touch(s) for s in asserts if s.may)
    reads = union_all(_touch(s) for s in stores)
    must_r = union_all(_touch(s) for s in stores if not s.may)
    return must_w, may_w, reads, must_r


def is_order(tuple_name: str) -> bool:
    """Whether an element's tuple is the pseudo-location, not a buffer."""
    return tuple_name == ORDER


def order_element() -> Element:
    """The evidence's element for a pair the pseudo-location makes."""
    return Element(ORDER, ())


def order_text(model: Model, kind: str, src: Instance, dst: Instance,
               src_name: str, dst_name: str) -> str:
    """What a pair on the pseudo-location says, naming the assert (or asserts) in it.

    ``src_name``/``dst_name`` are the model names of the two statements; ``kind``
    is the dependence kind (flow: the store runs after the assert, anti: before
    it, output: two asserts)."""
    first, second = model.statement(src_name), model.statement(dst_name)
    if kind == "output":
        what = (f"{src} is {_assert(first)} and {dst} is {_assert(second)}, "
                "which run in that order")
    elif kind == "flow":
        what = f"{dst} stores after {src}, which is {_assert(first)}"
    else:
        what = f"{src} stores before {dst}, which is {_assert(second)}"
    return (f"{what}; no statement with an effect moves across an assert (where it "
            "fails, the same stores must have happened)")


def _assert(s: StatementModel) -> str:
    return check_text(s.stmt)
