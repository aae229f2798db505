"""When TVM's cooperative fetch computes what the serial function computes.

A loop ``L`` bound to a thread axis holds loops bound to the same axis, the
*copies* (:mod:`polypad.transform.unify_thread_bindings`).  The GPU runs each
copy once, its iterations spread over ``L``'s threads, where the serial
function runs it at every iteration of ``L``; and the rest of ``L``'s body
runs in another order (``L`` moved inside the serial loops of its body).
Both programs compute the same values when:

1. the copies do not mention ``L``'s counter, and every buffer they read is
   written nowhere inside ``L`` -- so the copy at each iteration of ``L``
   writes the same values to the same elements, and which iteration wrote an
   element does not matter;
2. nothing in ``L`` but the copies writes what they write;
3. every read in ``L`` of what the copies write finds an element some copy
   wrote earlier *in the same iteration* of ``L`` (and of the loops around
   it): the serial function's last writer of that element is then a copy of
   that iteration, and the GPU program's is the copy's one instance, which
   wrote the same value;
4. without the copies, ``L`` carries no dependence: the rest of its body may
   run its iterations in any order.

Each is decided exactly: 1 and 2 on the syntax and the model's accesses, 3
and 4 with isl (3 as :mod:`.gpu_shared_reads` asks it, 4 by
:func:`.loop_carried.carried_dependence`).  A failure is a
:class:`~polypad.errors.BuildError` naming the loop, the instance and the
element.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.removal import StatementRemover
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk
from polypad.model import extract

from . import instances as inst
from .evidence import Element
from .loop_carried import carried_dependence


def check_rebinding(func: n.PrimFunc, outer: n.For, copies: list[n.For]) -> None:
    """Refuse (:class:`BuildError`) unless running each of ``copies`` once, on
    ``outer``'s threads, computes what ``func`` computes (the module docstring)."""
    name, axis = outer.var.name, outer.kind.value
    prefix = (f"loop {name!r} is bound to {axis} and holds loops bound to {axis} too (a "
              f"cooperative copy, run once with each iteration on its own thread as TVM "
              f"does), but ")
    for copy in copies:
        if outer.var in free_vars(copy):
            raise BuildError(prefix + f"the copy in loop {copy.var.name!r} uses {name!r}, "
                             "so its iterations of the two loops differ")
    model = extract(func)
    ids = {id(c) for c in copies}
    inside = [s for s in model.statements if any(loop is outer for loop in s.loops)]
    if not inside:
        return  # nothing runs in it
    is_copy = {s.name: any(id(loop) in ids for loop in s.loops) for s in inside}
    copy_reads = {a.buffer for s in inside if is_copy[s.name] for a in s.accesses
                  if a.kind == "read"}
    copy_writes = {a.buffer for s in inside if is_copy[s.name] for a in s.accesses
                   if a.kind == "write"}
    for s in inside:
        for a in s.accesses:
            if a.kind != "write":
                continue
            if a.buffer in copy_reads:
                raise BuildError(prefix + f"{_write(model, s, a)}, which a copy reads, "
                                 f"inside {name!r}")
            if a.buffer in copy_writes and not is_copy[s.name]:
                raise BuildError(prefix + f"{_write(model, s, a)}, which a copy writes too")
    depth = next(k for k, loop in enumerate(inside[0].loops) if loop is outer) + 1
    _check_reads_fed(model, inside, is_copy, copy_writes, depth, prefix, name)
    rest = _without(func, ids)
    rest_outer = next((m for m in walk(rest.body) if isinstance(m, n.For)
                       and m.var is outer.var), None)
    if rest_outer is not None:
        found = carried_dependence(rest, rest_outer, name)
        if found is not None:
            raise BuildError(prefix + f"the rest of it cannot run its iterations on "
                             f"threads in any order: {found}")


def _check_reads_fed(model, inside, is_copy, written, depth: int, prefix: str,
                     name: str) -> None:
    writes = [(s, a) for s in inside if is_copy[s.name] for a in s.accesses
              if a.kind == "write" and not a.may and not s.may]
    for d in inside:
        for b in d.accesses:
            if b.kind != "read" or b.buffer not in written:
                continue
            left = b.relation
            for s, a in writes:
                if a.buffer is not b.buffer:
                    continue
                earlier = s.time.lex_lt_map(d.time).reverse()  # d -> s before it
                for k in range(depth):  # the same iteration of outer and the loops around
                    earlier = earlier.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
                left = left.subtract(earlier.apply_range(a.relation))
                if left.is_empty():
                    break
            if left.is_empty():
                continue
            point = inst.first_point(isl.UnionMap.from_map(left))
            values, _ = inst.point_coordinates(point)
            k = d.domain.dim(isl.dim_type.set)
            where = inst.instance(model, d, values[:k])
            element = Element(b.buffer.name, tuple(int(v) for v in values[k:]))
            raise BuildError(prefix + f"{where} reads {element}, which no copy wrote "
                             f"before it in the same iteration of {name!r}")


def _write(model, s, a) -> str:
    """``S1(tx=0) writes A[0]``: the first instance of the write ``a`` of ``s``."""
    values, _ = inst.point_coordinates(inst.first_point(isl.UnionMap.from_map(a.relation)))
    k = s.domain.dim(isl.dim_type.set)
    element = Element(a.buffer.name, tuple(int(v) for v in values[k:]))
    return f"{inst.instance(model, s, values[:k])} writes {element}"


class _Remover(StatementRemover):
    def __init__(self, ids: set[int]):
        self.ids = ids

    def visit_For(self, node: n.For):
        if id(node) in self.ids:
            return None
        return super().visit_For(node)


def _without(func: n.PrimFunc, ids: set[int]) -> n.PrimFunc:
    """``func`` with the loops of ``ids`` deleted."""
    return _Remover(ids).visit(func)


__all__ = ["check_rebinding"]
