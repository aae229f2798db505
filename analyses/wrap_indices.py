"""Overcompute that stays in bounds by wrapping indices: ``wrap_leaving_indices(f, stmt)``.

RFC 0077's "implicitly write default value" walkthrough removes the last
guard of its convolution (step 10 to step 11) by rewriting B's row index
``io + (ii + fi) // 8`` as ``(io + (ii + fi) // 8) % 3``: run where the
guard ``ii < 2`` used to stop it, the body would store to ``B[3, 0]``,
outside B's shape ``(3, 8)``; wrapped, it stores to ``B[0, 0]`` instead, and
what it stores there (``F[fi] * 0.0`` added, A's padding being 0) leaves
the element as it was.

For an ``if c: body`` without an else branch whose body, run everywhere,
stores outside a buffer, :func:`wrap_leaving_indices` builds that
candidate: on each dimension of constant extent ``N`` where a store of the
body leaves ``[0, N)``, every index ``e`` of that buffer and dimension that
leaves it somewhere in the unguarded body (the store's, and the load of an
update ``B[e] = B[e] + d``) becomes ``e % N`` (floor modulo, as ``%`` is in
the IR: always in ``[0, N)`` for ``N > 0``).  No other index changes.

Only writes are redirected.  A read past the end of a buffer the body only
reads (the RFC's conv1d, whose A is too short) is a schedule that needs a
longer input, not a wrap: those refusals stay as they are, with their
counterexamples, and no hot load gains a modulo.

Why replacing ``stmt`` by the candidate's wrapped body is sound, when
:func:`analyses.can_remove_conditional` then proves the wrapped conditional
removable:

1. ``if c: wrapped_body`` does exactly what ``if c: body`` does.  Each
   wrapped ``e`` is proved to lie in ``[0, N)`` (:func:`analyses.prove`:
   ISL, or Z3 with the facts of the context) at every instance of the
   statement that evaluates it *in f*, that is wherever the branch ran:
   the context holds ``c``, the enclosing loops and conditions and the
   integer assumptions.  There ``e % N == e``, so every access reads and
   writes the element it did.  (An access evaluated lazily, inside a
   ``Select`` or an ``and``, is proved at every instance of its statement,
   a superset of those that evaluate it.)  Index arithmetic is integer and
   side-effect free, and ``e % N`` cannot overflow, so nothing else changes.
2. Removing the ``if`` of that equivalent function is then the ordinary
   question, decided by the same rules as every other conditional: every
   access of the wrapped body run everywhere stays inside its buffer
   (:func:`analyses.check_bounds`), no padding without a known value is
   read, and the body is a no-op where ``c`` is false
   (:func:`analyses.is_no_op`: overwritten, freed, or storing what is
   already there).  The elements the wrapped writes land on are ordinary
   elements to that question: real data there makes the body a change,
   and the removal is refused.

So the pass replaces ``stmt`` by ``wrapped_body`` only on a proof that the
result does what ``f`` did.  Only for conditionals refused because the
unguarded body leaves a buffer is a wrap tried at all, so the other
decisions cost what they did.

>>> wrap_leaving_indices(f, stmt).describe()
"B's row index wrapped modulo 3: io + (ii + fi) // 8 -> (io + (ii + fi) // 8) % 3 (...)"
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.show import show
from polypad.ir.visitor import Rewriter, walk
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected
from polypad.model import to_set

from .context import context_at
from .evidence import Proved, Unknown
from .program import program_of
from .prover import is_index_question, prove


@dataclass(frozen=True)
class IndexWrap:
    """One wrapped index: ``buffer``'s index ``dim`` (extent ``extent``), ``index`` as
    printed before the wrap."""

    buffer: str
    dim: int
    ndim: int
    extent: int
    index: str

    def axis(self) -> str:
        """``row index``/``column index`` for a 2-d buffer, ``index`` for a 1-d one, else
        ``index k``."""
        if self.ndim == 2:
            return ("row", "column")[self.dim] + " index"
        return "index" if self.ndim == 1 else f"index {self.dim}"


@dataclass(frozen=True)
class Wrapped:
    """The wrapped candidate for removing a conditional.

    ``func`` is ``f`` with the conditional replaced by ``conditional``, the
    same ``if`` whose then branch ``then_case`` has its leaving indices
    wrapped; ``func`` does exactly what ``f`` does (see the module
    docstring).  ``rebuilt`` pairs each ``if`` nested in the original then
    branch with the one that replaces it in ``then_case``.
    """

    func: n.PrimFunc
    conditional: n.IfThenElse
    wraps: tuple[IndexWrap, ...]
    method: str
    rebuilt: tuple[tuple[n.IfThenElse, n.IfThenElse], ...] = ()

    @property
    def then_case(self) -> n.Stmt:
        """The wrapped then branch: what replaces the conditional if it goes."""
        return self.conditional.then_case

    def describe(self) -> str:
        """``B's row index wrapped modulo 3: io + (ii + fi) // 8 -> (...) % 3, ...``."""
        groups: dict[tuple[str, int], list[IndexWrap]] = {}
        for w in self.wraps:
            groups.setdefault((w.buffer, w.dim), []).append(w)
        parts = []
        for ws in groups.values():
            rewrites = ", ".join(dict.fromkeys(
                f"{w.index} -> {_parenthesized(w.index)} % {w.extent}" for w in ws))
            parts.append(f"{ws[0].buffer}'s {ws[0].axis()} wrapped modulo "
                         f"{ws[0].extent}: {rewrites}")
        return (f"{'; '.join(parts)} (the same wherever the branch ran: inside the "
                f"buffer there, proved by {self.method})")


def wrap_leaving_indices(f: n.PrimFunc, stmt: n.IfThenElse, *,
                         everywhere: n.PrimFunc | None = None) -> Wrapped | Unknown:
    """The conditional ``stmt`` of ``f`` (an ``if`` without else) with every index of its
    then branch that would leave its buffer, were the branch run everywhere, wrapped
    modulo the buffer's extent; ``Unknown`` says why there is none.

    Only dimensions of constant extent and quasi-affine integer indices are
    wrapped.  Each wrapped index is proved to lie inside its dimension
    wherever the branch runs in ``f`` (``Unknown`` otherwise), so
    ``Wrapped.func`` does what ``f`` does; whether the conditional may then
    go is :func:`analyses.can_remove_conditional`'s question.

    ``everywhere``, if given, is ``f`` with ``stmt`` replaced by its then
    branch (a caller that has checked its bounds passes it, so that its
    model is built once).
    """
    if stmt.else_case is not None:
        return Unknown("indices are wrapped only for an if without an else branch")
    nothing = Unknown("no store of the branch leaves a dimension of constant extent of "
                      "its buffer: there is nothing to wrap")
    try:
        occurrences = _occurrences(stmt.then_case)
        if everywhere is None:
            everywhere = replace(f, stmt, stmt.then_case)
        unguarded = program_of(everywhere)
        # Only where a store leaves: the overcompute's writes are redirected, and with
        # them the loads of the same buffer and dimension (the read of `B[e] = B[e] + d`).
        stores = [(node, key, extent) for site_stmt, node, key, extent in occurrences
                  if isinstance(node, n.BufferStore)
                  and _may_leave(unguarded, site_stmt, node.indices[key[1]], extent)]
        stored = {(id(node.buffer), key[1]) for node, key, _ in stores}
        if not stored:
            return nothing
        targets = {key: extent for node, key, extent in stores}
        targets.update({key: extent for site_stmt, node, key, extent in occurrences
                        if isinstance(node, n.BufferLoad)
                        and (id(node.buffer), key[1]) in stored
                        and _may_leave(unguarded, site_stmt, node.indices[key[1]], extent)})
    except PolypadError as err:
        return Unknown(f"cannot tell which indices leave their buffers: {err}")
    methods: set[str] = set()
    wraps: dict[tuple, IndexWrap] = {}
    for site_stmt, node, key, extent in occurrences:
        if key not in targets:
            continue
        index = node.indices[key[1]]
        try:
            decided = prove(_inside(index, extent), context_at(f, site_stmt))
        except PolypadError as err:
            decided = Unknown(str(err))
        if not isinstance(decided, Proved):
            return Unknown(f"wrapping {node.buffer.name}'s index {show(index)} modulo "
                           f"{extent} could change the branch where it runs: {decided}")
        methods.add(decided.method)
        wraps.setdefault((node.buffer.name, key[1], show(index)), IndexWrap(
            node.buffer.name, key[1], len(node.indices), extent, show(index)))
    rewriter = _Wrap(targets)
    then_case = rewriter.visit(stmt.then_case)
    conditional = dataclasses.replace(stmt, then_case=then_case)
    return Wrapped(replace(f, stmt, conditional), conditional, tuple(wraps.values()),
                   "+".join(sorted(methods)), tuple(rewriter.rebuilt))


def _parenthesized(text: str) -> str:
    return text if text.isidentifier() or text.isdigit() else f"({text})"


# ---------------------------------------------------------------- which indices


def _occurrences(body: n.Stmt) -> list[tuple[n.Stmt, n.Expr | n.Stmt, tuple[int, int], int]]:
    """Every index of ``body`` on a dimension of constant extent, as ``(statement that
    evaluates it, access node, (id(node), dim), extent)``; quasi-affine candidates only."""
    out = []
    for stmt in walk(body):
        if not isinstance(stmt, n.Stmt):
            continue
        for node in _accesses(stmt):
            for k, (index, extent) in enumerate(zip(node.indices, node.buffer.shape,
                                                    strict=True)):
                if (isinstance(extent, int) and extent > 0 and dtypes.is_int(index.dtype)
                        and is_index_question(index)):
                    out.append((stmt, node, (id(node), k), extent))
    return out


def _accesses(stmt: n.Stmt) -> list[n.BufferLoad | n.BufferStore]:
    """The loads (and the store) that ``stmt`` itself evaluates, not its sub-statements."""
    match stmt:
        case n.BufferStore():
            own = [*stmt.indices, stmt.value]
        case n.IfThenElse():
            own = [stmt.condition]
        case n.For():
            own = [stmt.min, stmt.extent]
        case n.LetStmt() | n.Evaluate():
            own = [stmt.value]
        case _:
            own = []
    out: list = [x for e in own for x in walk(e) if isinstance(x, n.BufferLoad)]
    if isinstance(stmt, n.BufferStore):
        out.append(stmt)
    return out


def _inside(index: n.Expr, extent: int) -> n.Expr:
    return n.And(index >= n.IntImm(0, index.dtype), index < n.IntImm(extent, index.dtype))


def _may_leave(program, site_stmt: n.Stmt, index: n.Expr, extent: int) -> bool:
    """Whether ``index`` leaves ``[0, extent)`` at some instance of its statement in the
    unguarded ``program`` (loops and affine conditions; the rest is over-approximated)."""
    try:
        site = program.site_of(site_stmt)
        domain, _ = program.domain(site)
        inside = to_set(_inside(index, extent), program.space(site))
        return not domain.subtract(inside).is_empty()
    except (PolypadError, isl.Error) as err:
        rise_unless_expected(err, DIVISIONS_REFUSED)  # out of budget, ISL failing: rise
        return False  # not modelled: left alone (check_bounds still decides)


# ---------------------------------------------------------------- the rewrite


class _Wrap(Rewriter):
    """Wraps the indices ``targets`` names (``(id(access), dim) -> extent``)."""

    def __init__(self, targets: dict[tuple[int, int], int]) -> None:
        self.targets = targets
        self.rebuilt: list[tuple[n.IfThenElse, n.IfThenElse]] = []

    def _indices(self, node) -> tuple[n.Expr, ...]:
        out = []
        for k, index in enumerate(node.indices):
            new = self.visit(index)
            extent = self.targets.get((id(node), k))
            out.append(new if extent is None else n.FloorMod(new, n.IntImm(extent, new.dtype)))
        return tuple(out)

    def visit_BufferLoad(self, node: n.BufferLoad) -> n.BufferLoad:
        indices = self._indices(node)
        if all(a is b for a, b in zip(indices, node.indices, strict=True)):
            return node
        return dataclasses.replace(node, indices=indices)

    def visit_BufferStore(self, node: n.BufferStore) -> n.BufferStore:
        value, indices = self.visit(node.value), self._indices(node)
        if value is node.value and all(a is b for a, b in zip(indices, node.indices,
                                                              strict=True)):
            return node
        return dataclasses.replace(node, value=value, indices=indices)

    def visit_IfThenElse(self, node: n.IfThenElse) -> n.IfThenElse:
        out = self.generic_visit(node)
        if out is not node:
            self.rebuilt.append((node, out))
        return out
