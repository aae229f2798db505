"""Loops that run some instances of a block's statements, for the compute-location primitives.

``compute_at`` and ``reverse_compute_at`` move a block under a loop of
another nest and run there only the instances that one iteration of that
loop needs (or completes).  Those instances form a set whose parameters
are the loop variables around the new place (``io`` below); this module
hands ISL the statements' original program order on that set and turns
the AST it builds back into IR (:class:`.ast_to_ir.AstToIR`): the loops
keep the statements' loop-variable names, their bounds are simplified by
ISL in the context of the enclosing loops, and each statement is the
original one with its counters substituted.

Instances ``{ S0[i] : 4io <= i < 4io + 6 }`` of ``B[i] = A[i] * 2`` become::

    for i in T.serial(4 * io, 4 * io + 6):
        B[i] = A[i] * T.float32(2)
"""

from __future__ import annotations

import islpy as isl

from analyses.flow_inputs import constant_dims
from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.operators import cast
from polypad.ir.substitute import substitute
from polypad.model import (
    Model,
    StatementModel,
)
from polypad.model.isl_helpers import empty_union_map

from .ast_to_ir import user_call
from .checked_ast import RunsChecked, checked_loops
from .exact_bounds import bound as exact_bound
from .exact_bounds import fits
from .exact_bounds import guard as exact_guard

_ITER = "_t"  # prefix of the AST iterators, one per time dimension


def emit(model: Model, instances: dict[str, isl.Set], context: isl.Set,
         known: isl.Set | None = None, leaves: dict[str, n.Stmt] | None = None
         ) -> n.Stmt | None:
    """The loops running ``instances`` (statement name -> set, parameters the enclosing
    loop variables) in program order, under ``context`` (what holds of those
    parameters); ``None`` when no instance runs.  ``known`` is what else holds of the
    parameters (:func:`.exact_bounds.assumed`), for the bounds' dtypes only.
    ``leaves`` gives, for some statements, what an instance runs instead of the
    statement itself (a whole block, its counters substituted like the statement's)."""
    times = [model.statement(name).time.intersect_domain(domain)
             for name, domain in instances.items()]
    size = max((time.dim(isl.dim_type.out) for time in times), default=0)
    # A time dimension with one value for every instance orders nothing, and costs
    # ISL's AST generation a level: in a deep nest most are.  The iterators keep the
    # numbers of the dimensions they stand for.
    constant = constant_dims(times) if all(
        time.dim(isl.dim_type.out) == size for time in times) else []
    schedule = empty_union_map()
    for time in times:
        for k in reversed(constant):
            time = time.project_out(isl.dim_type.out, k, 1)
        schedule = schedule.union(isl.UnionMap.from_map(time))
    if schedule.is_empty():
        return None
    build = isl.AstBuild.from_context(context)
    ids = isl.IdList.alloc(isl.DEFAULT_CONTEXT, size - len(constant))
    for k in range(size):
        if k not in constant:
            ids = ids.add(isl.Id(f"{_ITER}{k}"))
    build = build.set_iterators(ids)
    # A loop that is no statement's own counts in the widest of their counters' dtypes.
    dtype = None
    for name in instances:
        for var in model.statement(name).loop_vars:
            dtype = var.dtype if dtype is None else dtypes.wider(dtype, var.dtype)
    return checked_loops(build, schedule, size - len(constant),
                         lambda: _Emitter(model, context, dtype or "int32", known, leaves or {}),
                         instances,
                         "the loops of the moved block")


class ExactLoops(RunsChecked):
    """:class:`.ast_to_ir.AstToIR` for loops put at a place of ``model``'s function:
    each bound and guard is ISL's reader form where it cannot wrap on the enclosing
    loops' box under ``context`` and ``known`` (:func:`.exact_bounds.assumed`), else
    the exact one (:mod:`.exact_bounds`).  ``user`` builds the statements.  With
    ``as_built``, a bound or guard that cannot wrap keeps isl's AST form as it is
    (``j_1 <= 1``), not the reader's (``j_1 < 2``).  The instances each call runs are
    recorded (:class:`.checked_ast.RunsChecked`)."""

    def __init__(self, model: Model, context: isl.Set, dtype: str, known: isl.Set | None,
                 user=None, *, as_built: bool = False) -> None:
        env = {model.names.name(v): v for v in model.names.objects()}
        super().__init__(env, user, dtype=dtype, names=model.names, context=context)
        self.model = model
        self.known = known
        self.as_built = as_built

    def bounds(self, lo: n.Expr, hi: n.Expr) -> tuple[n.Expr, n.Expr]:
        lo, extent = super().bounds(lo, hi)
        vars, space, where = self._space()
        # Checked or refused, never left as isl's AST wrote it (:func:`.exact_bounds.bound`).
        return self._tidy(lo, vars, space, where), self._tidy(extent, vars, space, where)

    def _tidy(self, e: n.Expr, vars, space, where) -> n.Expr:
        if self.as_built and fits(e, space, where, self.known):
            return e
        return exact_bound(e, vars, self.model.names, space, where, self.known)

    def condition(self, cond: n.Expr) -> n.Expr:
        vars, space, where = self._space()
        if self.as_built and fits(cond, space, where, self.known):
            return cond
        return exact_guard(cond, vars, self.model.names, space, where, self.known)


class _Emitter(ExactLoops):
    def __init__(self, model: Model, context: isl.Set, dtype: str, known: isl.Set | None,
                 leaves: dict[str, n.Stmt]) -> None:
        super().__init__(model, context, dtype, known)
        self.leaves = leaves

    def loop_var(self, iterator: str, node: isl.AstNode) -> n.Var:
        k = int(iterator[len(_ITER):])
        s = _first_statement(self.model, node)
        if s is not None and k % 2 == 1 and (k - 1) // 2 < len(s.loop_vars):
            var = s.loop_vars[(k - 1) // 2]
            return n.Var(var.name, var.dtype)
        return n.Var(f"c{k}", self.dtype)

    def loop_kind(self, iterator: str, node: isl.AstNode) -> n.ForKind:
        k = int(iterator[len(_ITER):])
        s = _first_statement(self.model, node)
        if s is not None and k % 2 == 1 and (k - 1) // 2 < len(s.loops):
            return s.loops[(k - 1) // 2].kind
        return n.ForKind.SERIAL

    def user(self, name: str, args: list[n.Expr], node: isl.AstNode) -> n.Stmt | None:
        s = self.model.statement(name)
        self.record(name, args)
        # A block's axes (lets of loop counters, no loads: location_placement) are
        # inlined: the regenerated loops bind the counters only.
        mapping = {var: cast(var.dtype, arg) for var, arg in zip(s.loop_vars, args, strict=True)}
        if name in self.leaves:  # the block keeps its axes, bound to the new counters
            return substitute(self.leaves[name], mapping)
        for var, value in s.lets.items():
            mapping[var] = substitute(value, mapping)
        return substitute(s.stmt, mapping)


def _first_statement(model: Model, node: isl.AstNode) -> StatementModel | None:
    """The first statement under ``node``, which names the loop's variable."""
    kind = node.get_type()
    if kind == isl.ast_node_type.user:
        return model.statement(user_call(node)[0])
    if kind == isl.ast_node_type.for_:
        return _first_statement(model, node.for_get_body())
    if kind == isl.ast_node_type.mark:
        return _first_statement(model, node.mark_get_node())
    if kind == isl.ast_node_type.if_:
        return _first_statement(model, node.if_get_then_node())
    if kind == isl.ast_node_type.block:
        children = node.block_get_children()
        return _first_statement(model, children.get_at(0)) if children.n_ast_node() else None
    raise PolypadError(f"cannot read the ISL AST node of type {kind}")  # pragma: no cover
