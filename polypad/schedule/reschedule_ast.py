"""Loops for an item of a block at its new times, through ``isl.AstBuild``.

:func:`regenerate` hands ISL the statements of one item with their times
(:func:`.reschedule_plan.entries`) and converts the AST it builds back to
IR (:mod:`.ast_to_ir`).  Two choices shape the result:

* **Rectangular loops with guards.**  Every loop runs over the whole range
  its dimension takes in the item (a box over the parameters only); where a
  statement runs on less, it is guarded, as early as its condition allows:
  ``for io, ii in T.grid(4, 4): if 4 * io + ii < 14: ...``, the RFC's form,
  which the overcompute primitives later remove.  ISL would instead fold the
  conditions into loop bounds (``for ii in range(min(4, 14 - 4 * io))``), so
  each loop gets an empty *marker* statement spanning its box within the
  region where its body runs; markers are dropped from the result.
* **Statements from the AST, indices from the model.**  A user node's call
  gives the original loop counters as expressions of the new loops; they
  are substituted into the statement.  Buffer indices are recomputed
  instead: the access relation composed with the inverse of the new
  schedule, as a ``PwAff`` read back by :func:`polypad.model.pw_aff_to_expr`,
  so the traversed buffer's access is exactly ``A[io, ii]`` and the others
  come out simplified by ISL (``A[io + (ii + f) // 4, (ii + f) % 4]``).
  Loop bounds and guards are read back the same way, in the context of the
  enclosing loops, so a guard is written as ``4 * io + ii < 14``; a guard
  with two bounds comes out as ISL's constraints, ``f >= 4 * io + ii - 13 and
  4 * io + ii >= f`` where the RFC writes ``0 <= 4 * io + ii - f < 14``.
"""

from __future__ import annotations

import dataclasses

import islpy as isl

from polypad.errors import NotAffineError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.operators import cast, logical_and
from polypad.ir.structural import structural_equal
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import Rewriter
from polypad.model import AffineSpace, StatementModel, pw_aff_to_expr
from polypad.model.affine import to_pw_aff
from polypad.model.isl_helpers import empty_union_map, time_map
from polypad.model.overflow import wraps_somewhere

from .ast_to_ir import user_call
from .checked_ast import RunsChecked, checked_loops
from .exact_bounds import assumed
from .exact_bounds import bound as exact_bound
from .exact_bounds import guard as exact_guard
from .reschedule_plan import Placement, entries, layout_length
from .reschedule_scope import Scope, lift

_MARK = "_mark"  # prefix of the marker statements' names
_ITER = "_t"  # prefix of the AST iterators, one per time dimension


def regenerate(scope: Scope, placements: list[Placement], names: tuple[str, ...],
               wrappers: dict[int, n.Block] | None = None,
               dtype: str = "int32") -> n.Stmt | None:
    """The loop nest running ``placements`` (one item's statements) in their new order;
    ``None`` when none of them ever runs.  A statement whose id is in ``wrappers``
    is put back in (a copy of) that block.  The band's loops ``names`` count in
    ``dtype`` (:func:`.counter_ranges.counter_dtype`); the statements' own loops
    keep their counters' dtypes.

    Inside a block within loops, only the block's part of each time is built
    (from the block's level on) and the enclosing counters are parameters
    (:func:`.reschedule_scope.lift`), known to lie where the enclosing loops and
    guards put them (:meth:`.reschedule_scope.Scope.context`).
    """
    r = len(names)
    depth = max(len(p.statement.loop_vars) for p in placements)
    cut = 2 * scope.fixed  # [p0, t1, p1, ..., te]: the enclosing loops, left as they are
    size = layout_length(r, depth) - cut
    times, layouts = {}, {}
    schedule = empty_union_map()
    for p in placements:
        s = p.statement
        layouts[s.name] = entries(s, p, r, depth, scope.fixed)[cut:]
        times[s.name] = lift(time_map(s.space, layouts[s.name], s.domain), scope.outer_vars,
                             scope.model)
        schedule = schedule.union(isl.UnionMap.from_map(times[s.name]))
    for k, marker in enumerate(_markers(times, layouts, size)):
        identity = isl.Map.identity(marker.get_space().map_from_set()).intersect_domain(marker)
        schedule = schedule.union(isl.UnionMap.from_map(
            identity.set_tuple_name(isl.dim_type.in_, f"{_MARK}{k}")))
    context, around = scope.context()
    build = isl.AstBuild.from_context(context)
    ids = isl.IdList.alloc(isl.DEFAULT_CONTEXT, size)
    for k in range(size):
        ids = ids.add(isl.Id(f"{_ITER}{k}"))
    # ISL's AST can lose (or repeat) instances of a strided dimension (checked_ast):
    # the loops must run exactly the statements' instances, or the rebuild is refused.
    instances = {p.statement.name: lift(p.statement.domain, scope.outer_vars, scope.model)
                 for p in placements}
    return checked_loops(
        build.set_iterators(ids), schedule, size,
        lambda: _Emitter(scope, {p.statement.name: p for p in placements}, names, times,
                         (context, around), wrappers or {}, dtype),
        instances, f"reorder_by_map of {scope.title}")


def _markers(times: dict[str, isl.Map], layouts: dict[str, list], size: int) -> list[isl.Set]:
    """One set per loop of the new nest: the loop's box, where its body runs."""
    groups: dict[tuple, isl.Set] = {}
    for name, layout in layouts.items():
        image = times[name].range()
        for k, entry in enumerate(layout):
            if isinstance(entry, int):
                continue
            key = (k, tuple(e if isinstance(e, int) else None for e in layout[:k]))
            groups[key] = image if key not in groups else groups[key].union(image)
    out = []
    for (k, _), image in groups.items():
        outer = image.project_out(isl.dim_type.set, k, size - k)
        line = image.project_out(isl.dim_type.set, k + 1, size - k - 1).project_out(
            isl.dim_type.set, 0, k)
        hull = loop_hull(line)
        if line.is_bounded() and not hull.is_bounded():
            # The hull over parameters can lose a bound the union has: of 0 <= x < n
            # and x = 1 it is x >= 0.  The union itself then (checked_ast still checks
            # that the loops run exactly the instances).
            hull = line.coalesce()
        marker = outer.flat_product(hull)
        marker = marker.add_dims(isl.dim_type.set, size - k - 1)
        for d in range(k + 1, size):
            value = -1 if d == k + 1 else 0  # before everything in the loop's body
            marker = marker.fix_val(isl.dim_type.set, d, isl.Val(str(value)))
        out.append(marker)
    return out


def loop_hull(line: isl.Set) -> isl.Set:
    """The polyhedral hull of a loop's values ``line`` (one dimension, over parameters),
    taken after its existential variables are projected out.

    Like the hull of ``line`` itself, a convex superset of it, which is all a
    marker needs (:mod:`.checked_ast` checks that the loops run exactly the
    instances); projecting and taking the hull commute over the rationals.
    But ISL's ``polyhedral_hull`` takes the hull with the integer divisions
    as dimensions, and on divisions with large coefficients
    (a layout's ``(4 * i + j) // 5`` of an index near ``n >= 2**31 - 9``) its
    big-integer arithmetic ran for minutes inside that one call, where no
    deadline reaches and ISL's operation limit does not count (fuzzer seed
    20001, case 182: ``sequential_buffer_access`` took 190 s of a 10 s
    budget); projected first, the same hull took a millisecond.
    """
    return isl.Set.from_basic_set(line.remove_divs().polyhedral_hull())


class _Emitter(RunsChecked):
    """AST to IR for :func:`regenerate`: loop names, tidy bounds, rebuilt statements,
    and the instances each statement's calls run (:class:`.checked_ast.RunsChecked`)."""

    def __init__(self, scope: Scope, placements: dict[str, Placement], names, times,
                 outside: tuple[isl.Set, tuple[n.Expr, ...]],
                 wrappers: dict[int, n.Block], dtype: str) -> None:
        model = scope.model
        # After lift: the enclosing loop counters are among the model's names.
        env = {model.names.name(v): v for v in model.names.objects()}
        # The band's counters count in dtype; the instances are recorded under what the
        # loops around the block guarantee.
        super().__init__(env, dtype=dtype, names=model.names, context=outside[0])
        self.model = model
        self.scope = scope
        self.fixed = scope.fixed
        self.placements = placements
        self.band_names = names  # self.names: the model's (RunsChecked)
        self.times = times
        # What holds of the loops around the block, and the conditions around it
        # that the model leaves out: they stay where they are.
        self.context, self.around = outside
        self.wrappers = wrappers
        # What holds where the item runs, T.assume included: a bound or guard that
        # wraps only where that fails needs no int64 (exact_bounds).
        first = next(iter(placements.values())).statement
        self.assumed = assumed(scope.func, scope.items[scope.item_of[first.name]], model.names)

    # ------------------------------------------------------------ loops

    def _dimension(self, iterator: str, node: isl.AstNode):
        """(band member index, None) or (None, (statement, loop level)) of a loop."""
        k = int(iterator[len(_ITER):])
        r = len(self.band_names)
        if 1 <= k < 1 + 2 * r and (k - 1) % 2 == 0:
            return (k - 1) // 2, None
        j = (k - 1 - 2 * r) // 2
        name = _first_statement(node)
        if k > 2 * r and (k - 1 - 2 * r) % 2 == 0 and name in self.placements:
            return None, (self.placements[name].statement, self.fixed + j)
        return None, None

    def loop_var(self, iterator: str, node: isl.AstNode) -> n.Var:
        band, loop = self._dimension(iterator, node)
        if band is not None:
            return n.Var(self.band_names[band], self.dtype)
        if loop is not None:
            s, j = loop
            return n.Var(s.loop_vars[j].name, s.loop_vars[j].dtype)
        return n.Var(f"c{iterator[len(_ITER):]}", self.dtype)

    def loop_kind(self, iterator: str, node: isl.AstNode) -> n.ForKind:
        _, loop = self._dimension(iterator, node)
        return loop[0].loops[loop[1]].kind if loop is not None else n.ForKind.SERIAL

    def bounds(self, lo: n.Expr, hi: n.Expr) -> tuple[n.Expr, n.Expr]:
        lo, extent = super().bounds(lo, hi)
        vars, space, context = self._space()
        # Checked or refused, never left as isl's AST wrote it (:func:`.exact_bounds.bound`):
        # ``T.Cast("int32", n + 99) // 200 + 1`` over an int8 ``n``, whose reader form isl
        # cannot write in int8, wraps to no iteration at n = 29.
        return (self._tidy(lo, vars, space, context),
                self._tidy(extent, vars, space, context))

    def _tidy(self, e: n.Expr, vars, space, context) -> n.Expr:
        return exact_bound(e, vars, self.model.names, space, context, self.assumed)

    def condition(self, cond: n.Expr) -> n.Expr:
        vars, space, context = self._space()
        # The guard runs on the loops' whole box, where ISL's reader form may wrap
        # (``3 * io + ii < n`` reaches ``n + 1`` at the last ``io``, past int32 for
        # ``n = 2**31 - 1``, and would let that iteration through).
        return exact_guard(cond, vars, self.model.names, space, context, self.assumed)

    # ------------------------------------------------------------ statements

    def user(self, name: str, args: list[n.Expr], node: isl.AstNode) -> n.Stmt | None:
        if name.startswith(_MARK):
            return None
        self.record(name, args)
        s = self.placements[name].statement
        # The loops around the block stay, and with them their counters.  A counter's
        # value is one of its dtype: computed over wider band counters, it is cast back.
        sub = {var: cast(var.dtype, arg)
               for var, arg in zip(s.loop_vars[self.fixed:], args, strict=True)}
        indices, where = self._indices(s)
        lets, resolved = [], {}
        for var, value in s.lets.items():
            if var in self.scope.outer_lets:
                # Bound around the block, and still bound there.
                resolved[var] = substitute(value, resolved)
                continue
            fresh = n.Var(var.name, var.dtype)
            lets.append((fresh, self._tidy_value(_Rebuild(sub, indices, resolved).visit(value),
                                                 where)))
            resolved[var] = substitute(value, resolved)
            sub[var] = fresh
        rebuild = _Rebuild(sub, indices, resolved)
        body = rebuild.visit(s.stmt)
        if isinstance(body, n.Block):
            # A block moved whole binds its axes to the new loops: ISL's form of each.
            body = dataclasses.replace(body, body=self._tidy_axes(body.body, where))
        bound = {id(v) for v, _ in lets}
        outer_guards, inner_guards = [], []
        around = list(self.around)
        for guard in s.dropped_guards:
            # The conditions around the block come first, and still hold there.
            same = next((k for k, a in enumerate(around) if structural_equal(guard, a)), None)
            if same is not None:
                del around[same]
                continue
            g = rebuild.visit(guard)
            uses_let = any(id(v) in bound for v in free_vars(g))
            (inner_guards if uses_let else outer_guards).append(g)
        if inner_guards:
            body = n.IfThenElse(logical_and(*inner_guards), body)
        for var, value in reversed(lets):
            # A let the recomputed indices no longer use goes (let values are pure).
            if any(v is var for v in free_vars(body)):
                body = n.LetStmt(var, value, body)
        if outer_guards:
            body = n.IfThenElse(logical_and(*outer_guards), body)
        if isinstance(s.stmt, n.Block):
            return body  # a block moved whole (reschedule_blocks): its axes bound above
        block = self.wrappers.get(id(s.stmt))
        return body if block is None else dataclasses.replace(block, body=body)

    def _tidy_axes(self, body: n.Stmt, where: isl.Set) -> n.Stmt:
        """``body`` with the values of its leading lets (a block's axes) simplified."""
        if not isinstance(body, n.LetStmt):
            return body
        return dataclasses.replace(body, value=self._tidy_value(body.value, where),
                                   body=self._tidy_axes(body.body, where))

    def _tidy_value(self, value: n.Expr, where: isl.Set) -> n.Expr:
        """An affine let value simplified by ISL (``8 * io + ii - 2 - f + 2`` -> ``8 * io +
        ii - f``); anything else as it is."""
        vars = [var for _, var, _, _ in self.loops]
        known = {id(v) for v in vars} | {id(v) for v in self.env.values()}
        if not dtypes.is_int(value.dtype) or any(id(v) not in known for v in free_vars(value)):
            return value
        space = AffineSpace(vars, names=self.model.names)
        try:
            pa = to_pw_aff(value, space)
            tidy = pw_aff_to_expr(pa, vars, self.model.names, context=where)
        except NotAffineError:
            # Not a bound isl wrote: the let's own value over the old counters' values,
            # computed as the original computed it, is kept as it is.
            return value
        # ISL's form is the exact value: it stands for the executed one only
        # where neither form wraps around.
        # (ISL's error rises: the primitive answers it, polypad.isl_failure.)
        if any(wraps_somewhere(e, space, where) for e in (value, tidy)):
            return value
        return tidy

    def _indices(self, s: StatementModel) -> dict[int, tuple[n.Expr, ...]]:
        """New indices of each access of ``s``, by node identity, from the access relations."""
        levels = [int(it[len(_ITER):]) for it, _, _, _ in self.loops]
        vars = [var for _, var, _, _ in self.loops]
        if any(self.env[it] is not var for it, var, _, _ in self.loops):
            # A strided loop: its counter is not the time itself (markers prevent it).
            raise PolypadError(f"the new loops around {s.name} are strided")  # pragma: no cover
        inverse = self.times[s.name].reverse()
        size = inverse.dim(isl.dim_type.in_)
        for k in reversed(range(size)):
            if k not in levels:
                inverse = inverse.project_out(isl.dim_type.in_, k, 1)
        if not inverse.is_single_valued():  # pragma: no cover - the times are injective
            raise PolypadError(f"the new loops do not determine the instance of {s.name}")
        where = inverse.domain()
        out: dict = {}
        for access in s.accesses:
            relation = inverse.apply_range(
                lift(access.relation, self.scope.outer_vars, self.model))
            if relation.is_empty() or not relation.is_single_valued():
                continue
            pma = isl.PwMultiAff.from_map(relation)
            out[id(access.node)] = out[access.node] = tuple(
                pw_aff_to_expr(pma.get_at(k), vars, self.model.names, context=where)
                for k in range(relation.dim(isl.dim_type.out)))
        return out, where


class _Rebuild(Rewriter):
    """A statement at its new place: counters substituted, indices recomputed."""

    def __init__(self, sub: dict, indices: dict, lets: dict) -> None:
        self.sub = sub
        self.indices = indices  # by node identity, and by the node with lets substituted
        self.lets = lets

    def _new_indices(self, node) -> tuple[n.Expr, ...] | None:
        found = self.indices.get(id(node))
        if found is None and self.lets:
            # The model saw this access with the let variables replaced by their values.
            found = self.indices.get(substitute(node, self.lets))
        return found

    def visit_Var(self, var: n.Var):
        return self.sub.get(var, var)

    def visit_BufferLoad(self, node: n.BufferLoad):
        new = self._new_indices(node)
        if new is None:
            return self.generic_visit(node)
        return dataclasses.replace(node, indices=new)

    def visit_BufferStore(self, node: n.BufferStore):
        value = self.visit(node.value)
        new = self._new_indices(node)
        if new is None:
            new = tuple(self.visit(i) for i in node.indices)
        return dataclasses.replace(node, value=value, indices=new)


def _first_statement(node: isl.AstNode) -> str | None:
    """The name of the first real (non-marker) statement under ``node``."""
    kind = node.get_type()
    if kind == isl.ast_node_type.user:
        name, _ = user_call(node)
        return None if name.startswith(_MARK) else name
    if kind == isl.ast_node_type.for_:
        return _first_statement(node.for_get_body())
    if kind == isl.ast_node_type.mark:
        return _first_statement(node.mark_get_node())
    if kind == isl.ast_node_type.if_:
        found = _first_statement(node.if_get_then_node())
        if found is None and node.if_has_else_node():
            found = _first_statement(node.if_get_else_node())
        return found
    if kind == isl.ast_node_type.block:
        children = node.block_get_children()
        for k in range(children.n_ast_node()):
            found = _first_statement(children.get_at(k))
            if found is not None:
                return found
    return None
