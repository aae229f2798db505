"""Loop-carried dependences: may the iterations of one loop run in any order?

A dependence ``src -> dst`` is *carried* by the loop ``L`` when both
instances lie in ``L``, run in the same iteration of every loop around
``L``, and in different iterations of ``L``.  Running ``L``'s iterations at
once (``parallel``) or in lanes (``vectorize``) may then run ``dst`` before
``src`` or with it; a dependence between two instances of one iteration of
``L`` is kept, since each iteration still runs its body in order.

Before (the prefix sum: ``i = 1`` reads what ``i = 0`` wrote)::

    for i in T.serial(1, 8):
        B[i] = B[i - 1] + A[i]

``carried_dependence(f, loop_i)`` is a ``Counterexample`` naming
``S0(i=1)``, ``S0(i=2)`` and the element ``B[1]``.
"""

from __future__ import annotations

import islpy as isl

from polypad.ir import nodes as n
from polypad.ir.loop_names import loop_name
from polypad.ir.visitor import walk
from polypad.model.isl_helpers import maps_of

from . import instances as inst
from .assert_order import is_order
from .dataflow import dependences
from .evidence import Counterexample


def carried_dependence(func: n.PrimFunc, loop: n.For, name: str, *,
                       kinds=("flow", "output", "anti"), floats_only: bool = False,
                       deps=None) -> Counterexample | None:
    """A dependence of ``func`` that ``loop`` (named ``name``) carries, or ``None``.

    Flow dependences are looked for first, then output, then anti (of
    ``kinds``); a may-dependence (under a data-dependent guard) counts, and
    its description says so.  ``floats_only`` looks at floating-point
    elements only.  ``deps`` are ``func``'s dependences when the caller has them.
    """
    deps = deps if deps is not None else dependences(func)
    carried = _carried_pairs(deps.model, loop)
    if carried is None:
        return None
    for kind in kinds:
        # [S -> A] -> [S' -> A]  as  [S -> S'] -> [A -> A], kept where S -> S' is carried.
        tagged = deps.tagged(kind)
        if floats_only:
            tagged = _on_floats(deps.model, tagged)
        found = tagged.zip().intersect_domain(carried.wrap()).zip()
        if found.is_empty():
            continue
        point = inst.first_point(found)
        src, dst, element, params = deps.decode(point)
        what = deps.pair_text(kind, point, src, dst, element) if is_order(
            element.buffer) else {
            "flow": f"{dst} reads {element}, which {src} writes",
            "anti": f"{src} reads {element} before {dst} overwrites it",
            "output": f"{src} writes {element} and {dst} overwrites it",
        }[kind]
        article = "an" if kind in ("anti", "output") else "a"
        text = (f"the loop over {name} carries {article} {kind} dependence: {what}, "
                f"in another iteration of {name}")
        if kind == "flow" and found.intersect(deps.tagged("flow_must")).is_empty():
            text += " (a may-dependence: a data-dependent guard decides whether it exists)"
        return Counterexample(text, instances=(src, dst), element=element, params=params)
    return None


def _carried_pairs(model, loop: n.For) -> isl.UnionMap | None:
    """``S[...] -> S'[...]`` for every two instances inside ``loop`` in the same
    iteration of the loops around it and different iterations of ``loop``."""
    inside = []
    for s in model.statements:
        depth = next((k for k, x in enumerate(s.loops) if x is loop), None)
        if depth is not None:
            inside.append((s, depth))
    out = None
    for s, depth in inside:
        for t, _ in inside:
            # Both statements share the loops down to ``loop``: the same dims 0..depth.
            pairs = isl.Map.from_domain_and_range(s.domain, t.domain)
            for d in range(depth):
                pairs = pairs.equate(isl.dim_type.in_, d, isl.dim_type.out, d)
            differ = pairs.order_lt(isl.dim_type.in_, depth, isl.dim_type.out, depth).union(
                pairs.order_gt(isl.dim_type.in_, depth, isl.dim_type.out, depth))
            part = isl.UnionMap.from_map(differ)
            out = part if out is None else out.union(part)
    return out


def floating_reduction_inside(func: n.PrimFunc, loop: n.For,
                              within: tuple[n.Stmt, ...] | None = None) -> Counterexample | None:
    """A flow dependence through a floating-point element that a loop inside ``loop``
    carries (a sum over ``k`` inside a loop over ``i``), or ``None``.

    ``vectorize`` compiles its loop with fast-math, whose reassociation reaches
    the loops inside it: such a reduction would be reordered without the user
    asking (``rfactor`` is how one asks).  ``within`` narrows the question to
    the loops in those statements (the ones the lanes still stay around:
    :func:`polypad.semantics.vector_lanes.lanes_innermost`).
    """
    roots = (loop.body,) if within is None else within
    inner_loops = [x for root in roots for x in walk(root) if isinstance(x, n.For)]
    # What a loop inside ``loop`` carries lies within one run of ``loop``.
    deps = dependences(func, inside=loop) if inner_loops else None
    for inner in inner_loops:
        found = carried_dependence(func, inner, loop_name(func, inner), kinds=("flow",),
                                   floats_only=True, deps=deps)
        if found is not None:
            return found
    return None


def _on_floats(model, tagged: isl.UnionMap) -> isl.UnionMap:
    """The part of ``tagged`` (``[S -> A] -> [S' -> A]``) on floating-point buffers."""
    out = isl.UnionMap.empty(tagged.get_space())
    for m in maps_of(tagged):
        buffer = m.get_space().domain().unwrap().get_tuple_name(isl.dim_type.out)
        if model.buffer(buffer).dtype.startswith(("float", "bfloat")):
            out = out.union(isl.UnionMap.from_map(m))
    return out
