"""Access relations: which buffer elements each statement instance touches.

A statement reads every ``BufferLoad`` in its stored value, its indices, its
enclosing guards and loop bounds, and (through let bindings) the values of
the let variables it uses.  A load under ``T.if_then_else(c, ...)`` is only
performed where its branch is taken, so its relation is restricted by ``c``
(or ``not c``) when that is affine; otherwise it keeps the whole domain and
is marked ``may``.  An access through a view is an access of the buffer
owning its memory (:func:`polypad.ir.views.through_view`), and a vector
access (an index ``T.Ramp(b, s, n)``) touches the elements of its ``n``
lanes (:mod:`polypad.ir.lanes`), so dependences and bounds see through both.
Indices must be quasi-affine: ``A[i * j]`` raises
:class:`NotAffineError` naming ``i * j`` and the access it sits in.  So does
an index in which the operand of a ``//``, ``%``, ``min`` or ``max`` may
wrap around its integer width at some instance (:mod:`.overflow`), since
ISL's integers do not wrap; an instance counts only at the parameter values
the function's top-level assumptions allow (:mod:`.parameter_facts`).  The
error's ``evidence`` (and message) is the first such instance with the value
that leaves the dtype (:class:`.overflow.Wrap`: ``i + 2 = 128 at i = 126,
n = 127``).  A
wrap that only feeds ``+ - *`` is harmless: the executed index then equals
the exact one whenever the exact one is inside the buffer, which the bounds
check (:mod:`analyses.bounds`) decides.

A model built with ``gathers=True`` (:func:`polypad.model.extract_gathers`,
for the GPU's barrier plan) instead over-approximates an axis whose index
reads memory (``A[X[i]]``: a gather, ``B[X[i]] = ...``: a scatter) by every
element of the buffer's extent on that axis it may name (:mod:`.gathers`),
and marks the access ``may`` with the loads it reads in ``gathered``.  Every
element the access can touch without leaving its buffer is in that range;
one outside is stopped by the run-time bounds check that such an access
always gets, unless the user turns checks off (``boundscheck=False``, unsafe).
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.deep import guarded
from polypad.ir.lanes import lane, lane_count
from polypad.ir.naming import Names
from polypad.ir.show import show
from polypad.ir.substitute import substitute
from polypad.ir.views import through_view
from polypad.ir.visitor import children

from .affine import AffineSpace, _Converter, to_map
from .conditions import condition_set
from .gathers import any_element
from .model import Access
from .nest import Leaf
from .overflow import first_wrap, wrapping_operation, wraps_somewhere

# A path condition: (condition, branch taken) of an enclosing T.if_then_else.
_Path = tuple[tuple[n.Expr, bool], ...]


def statement_accesses(
    leaf: Leaf, name: str, space: AffineSpace, domain: isl.Set, may: bool, buffers: Names,
    known: isl.Set | None = None, gathers: bool = False,
) -> tuple[Access, ...]:
    """Every access of ``leaf`` (statement ``name``): the write first, then reads in order.

    With ``gathers``, an index that reads memory is over-approximated by its
    buffer's extent (see the module docstring) instead of refused.

    ``known``, a set of parameter values outside which no instance of the leaf
    runs (:mod:`.parameter_facts`), narrows only where an index or a condition
    is checked for wrap-around; the relations keep the whole ``domain``.
    """
    stmt = leaf.stmt
    runs = domain if known is None else domain.intersect_params(known)
    out: list[Access] = []
    if isinstance(stmt, n.BufferStore):
        relation, loads = _relation(stmt.buffer, stmt.indices, stmt, name, space, buffers,
                                    runs, gathers)
        owner, indices = through_view(stmt.buffer, stmt.indices)
        out.append(Access("write", owner, indices, stmt, relation.intersect_domain(domain),
                          may or bool(loads), loads))
    # A long expression reads the same element many times (`A[i] + A[i] + ...`):
    # each distinct access and path is converted once.
    reads: dict = {}
    for load, path in _reads(leaf):
        key = (load.buffer, load.indices, path)
        found = reads.get(key)
        if found is None:
            relation, loads = _relation(load.buffer, load.indices, load, name, space,
                                        buffers, runs, gathers)
            where, exact = _path_set(path, space, domain, runs)
            found = reads[key] = (relation.intersect_domain(where),
                                  may or not exact or bool(loads), loads)
        owner, indices = through_view(load.buffer, load.indices)
        out.append(Access("read", owner, indices, load, *found))
    return tuple(out)


def _reads(leaf: Leaf) -> list[tuple[n.BufferLoad, _Path]]:
    lets = _resolve_lets(leaf.lets)
    exprs: list[n.Expr] = []
    for loop in leaf.loops:
        exprs += [loop.min, loop.extent]
    exprs += [g.condition for g in leaf.guards]
    stmt = leaf.stmt
    if isinstance(stmt, n.BufferStore):
        exprs += [stmt.value, *stmt.indices]
    elif isinstance(stmt, n.Assert):
        exprs.append(stmt.condition)  # scalars, but a let it uses may load
    else:
        exprs.append(stmt.value)
    found: list[tuple[n.BufferLoad, _Path]] = []
    for e in exprs:
        _collect(substitute(e, lets), (), found)
    return found


def _resolve_lets(lets: dict) -> dict:
    """Let values with earlier let variables substituted (bindings are in scope order)."""
    resolved: dict = {}
    for var, value in lets.items():
        resolved[var] = substitute(value, resolved)
    return resolved


@guarded
def _collect(e: n.Expr, path: _Path, found: list) -> None:
    if isinstance(e, n.Select):
        _collect(e.condition, path, found)
        _collect(e.true_value, (*path, (e.condition, True)), found)
        _collect(e.false_value, (*path, (e.condition, False)), found)
        return
    if isinstance(e, n.BufferLoad):
        found.append((e, path))
    for child in children(e):
        _collect(child, path, found)


def _path_set(path: _Path, space: AffineSpace, domain: isl.Set,
              runs: isl.Set) -> tuple[isl.Set, bool]:
    where, exact = domain, True
    for cond, taken in path:
        try:
            s = condition_set(cond, space)
            if wraps_somewhere(cond, space, runs):
                raise NotAffineError("it may wrap around", cond)
        except NotAffineError:
            exact = False
            continue
        where = where.intersect(s if taken else s.complement())
    return where, exact


def _relation(buffer: n.Buffer, indices, node, name: str, space: AffineSpace,
              buffers: Names, domain: isl.Set, gathers: bool = False
              ) -> tuple[isl.Map, tuple[n.BufferLoad, ...]]:
    """``S[...] -> Owner[...]``: the elements the access touches, in the memory owner's
    indices (a vector access touches one element per lane), and the loads its
    over-approximated axes read (with ``gathers``; else such an index raises)."""
    count = max((lane_count(i) for i in indices), default=1)
    relation, loads = None, []
    for k in range(count):
        owner, at = through_view(buffer, tuple(lane(i, k) for i in indices))
        one = _lane_relation(owner, at, node, name, space, buffers, domain,
                             loads if gathers else None)
        relation = one if relation is None else relation.union(one)
    return relation, tuple(dict.fromkeys(loads))


def _lane_relation(buffer: n.Buffer, indices, node, name: str, space: AffineSpace,
                   buffers: Names, domain: isl.Set, loads: list | None = None) -> isl.Map:
    conv = _Converter(space)
    pws, anywhere = [], {}
    for k, index in enumerate(indices):
        try:
            pws.append(conv.pw_aff(index))
            culprit = wrapping_operation(index, space, domain, modular_root=True)
            if culprit is not None:
                # The evidence: the first instance where the culprit leaves its dtype.
                wrap = first_wrap(culprit, space, domain)
                at = f": {wrap}" if wrap is not None else ""
                raise NotAffineError(
                    f"{show(index)} may wrap around its {culprit.dtype} range{at}", index,
                    wrap)
        except NotAffineError as err:
            if loads is not None and isinstance(err.expr, n.BufferLoad):
                # A data-dependent index (the converter stopped at a load): any element.
                loads.append(err.expr)
                anywhere[k] = index
                pws.append(space.const(0))  # a placeholder, replaced below
                continue
            where = f"index {k} of {_describe(node)} in statement {name}"
            raise NotAffineError(f"{err} (in {where})", err.expr, err.evidence) from None
    relation = to_map(space, pws, buffers.name(buffer))
    if anywhere:
        relation = any_element(relation, buffer, anywhere, space, domain, buffers.name(buffer))
    return relation


def _describe(node) -> str:
    if isinstance(node, n.BufferStore):
        idx = ", ".join(show(i) for i in node.indices)
        return f"the store to {node.buffer.name}[{idx}]"
    return show(node)
