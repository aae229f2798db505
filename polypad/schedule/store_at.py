"""The rewrite behind ``Schedule.store_at``: an intermediate buffer allocated inside a loop.

Halide's ``store_at``, and what TVM's buffer compaction does when it lowers:
a buffer the function allocates, whose elements live only within one
iteration of a loop, is allocated in that loop, shaped as the box of what
one iteration touches.  After ``compute_at`` has moved a producer into its
consumer's tile, this is what turns the producer's full-size buffer into a
tile that fits in registers (and that the Numba target allocates on the
stack, :mod:`codegen.numba.emit`).

Before (``conv`` computed at ``c_0``, tiles of 5 x 8)::

    conv = T.alloc_buffer((4, 10, 16), "float32")
    for y, x_0, c_0 in T.grid(4, 2, 2):
        with T.block("conv"):
            for x in T.serial(5 * x_0, 5 * x_0 + 5):
                for c in T.serial(8 * c_0, 8 * c_0 + 8):
                    conv[y, x, c] = bias[c]
                    ...
        for x_1, c_1 in T.grid(5, 8):
            relu[y, x_0 * 5 + x_1, c_0 * 8 + c_1] = T.max(
                conv[y, x_0 * 5 + x_1, c_0 * 8 + c_1], 0.0)

``store_at(f, "conv", "c_0")``::

    for y, x_0, c_0 in T.grid(4, 2, 2):
        conv = T.alloc_buffer((1, 5, 8), "float32")
        with T.block("conv"):
            for x in T.serial(5 * x_0, 5 * x_0 + 5):
                for c in T.serial(8 * c_0, 8 * c_0 + 8):
                    conv[0, x - 5 * x_0, c - 8 * c_0] = bias[c]
        ...

Legal when (each refusal an :class:`IllegalTransformError` with evidence):

* the buffer is allocated by the function (``T.alloc_buffer``) around the
  loop, not a parameter, whose contents the caller sees;
* every access to it lies inside the loop;
* no value flows through it from one iteration of the loop (or of a loop
  around it) to another: every read sees a write of its own iteration, or
  none at all (then it reads the allocation's zeros, as before).  The
  dependences are ISL's value-based dataflow (:mod:`analyses.dataflow`), with
  data-dependent writes as may-sources.

The box has the constant size of the largest iteration's region; the
accesses are shifted to its corner (:mod:`.cache_at`).
"""

from __future__ import annotations

import dataclasses

from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, find_buffer, find_loop, replace
from polypad.ir.views import require_unshared
from polypad.model import extract, pw_aff_to_expr

from .location_box import ShiftToBox, box_around, one_map, relation_of
from .location_legality import check_store_at, refuse_access
from .location_placement import Placement, at_iteration


def store_at(func: n.PrimFunc, buffer, loop) -> tuple[n.PrimFunc, tuple[int, ...]]:
    """``func`` with ``buffer`` allocated inside ``loop``, and the buffer's new shape."""
    from analyses.instances import leaf_range

    old = find_buffer(func, buffer)
    require_unshared(func, old, "store_at")
    target = find_loop(func, loop)
    where = f"store_at({old.name!r}, {target.var.name!r})"
    allocation = _allocation(func, old, target, where)
    model = extract(func)
    first, stop = leaf_range(func.body, target)
    # A T.assume's loads are reads: the local buffer must hold what it reads too.
    under = list(model.statements[first:stop])
    for s in model.statements[:first] + model.statements[stop:]:
        for a in s.accesses:
            # A statement that never runs (a split's empty main nest) accesses nothing.
            if a.buffer is old and not a.relation.is_empty():
                refuse_access(model, s, a, f"{where}: {{who}} {a.kind}s {old.name} outside "
                              "the loop; sch.compute_at (or reverse_compute_at) of its "
                              "block into the loop first")
    users = [s for s in under if any(a.buffer is old for a in s.accesses)]
    if not users:
        raise PolypadError(f"{where}: nothing in the loop accesses {old.name}")
    depth = next(k for k, lp in enumerate(users[0].loops) if lp is target) + 1
    p = Placement(func, model, None, None, [], target, users, depth, where)
    check_store_at(p, old)
    touched = one_map(at_iteration(p, [relation_of(s, old) for s in users]))
    lo, shape = box_around(p, touched)
    local = n.Buffer(old.name, tuple(shape), old.dtype, (), old.scope)
    corner = [pw_aff_to_expr(pa, list(p.outer_vars), model.names) for pa in lo]
    shift = _Everywhere(model, old, local, corner, where)
    body = n.Allocate(local, shift.visit(target.body))
    new = replace(func, target, dataclasses.replace(target, body=body))
    outer = _find_same(new, allocation)
    return replace(new, outer, outer.body), tuple(shape)


def _allocation(func: n.PrimFunc, buffer: n.Buffer, loop: n.For, where: str) -> n.Allocate:
    """The ``Allocate`` of ``buffer``, which must be around ``loop``."""
    if any(p is buffer for p in func.params):
        raise IllegalTransformError(f"{where}: {buffer.name} is a parameter, whose contents "
                                    "the caller sees; only a buffer the function allocates "
                                    "can move", evidence=buffer.name)
    for node in ancestors(func, loop):
        if isinstance(node, n.Allocate) and node.buffer is buffer:
            return node
    raise IllegalTransformError(f"{where}: {buffer.name} is not allocated around the loop",
                                evidence=buffer.name)


def _find_same(func: n.PrimFunc, allocation: n.Allocate) -> n.Allocate:
    """The outer ``Allocate`` of the buffer in the rewritten ``func`` (its body changed)."""
    from polypad.ir.visitor import walk

    for node in walk(func.body):
        if isinstance(node, n.Allocate) and node.buffer is allocation.buffer:
            return node
    raise PolypadError("the allocation went missing")  # pragma: no cover


class _Everywhere(ShiftToBox):
    """Every access of ``old`` under the loop, shifted to the local buffer."""

    def __init__(self, model, old: n.Buffer, local: n.Buffer, corner, where: str):
        super().__init__(model, old, local, corner, block=None, where=where)
        self.active = True

    def visit_Block(self, node: n.Block):
        return self.generic_visit(node)
