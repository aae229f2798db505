"""``rfactor`` of an arg-reduction: the partial winners and their indices, two buffers.

An argmax (or argmin) updates two buffers per step, the index of the best
value so far and the value (:class:`analyses.combiners.ArgUpdate`)::

    for j in T.serial(1, 64):                          # before
        I[i] = T.if_then_else(A[i, j] > M[i], j, I[i])
        M[i] = T.max(M[i], A[i, j])

``rfactor`` over ``j_1`` (after ``split(j, [None, 16])``) gives each value of
``j_1`` a partial winner: its value and its index, from the combiner's
identity and the largest index (which loses every tie)::

    M_rf = T.alloc_buffer((16,), "float32")            # after
    I_rf = T.alloc_buffer((16,), "int32")
    for j_1_init in T.serial(16):
        M_rf[j_1_init] = T.float32("-inf")
        I_rf[j_1_init] = 2147483647
    for j_0, j_1 in T.grid(4, 16):                     # the update, on M_rf, I_rf
        I_rf[j_1] = T.if_then_else(A[i, ...] > M_rf[j_1], j_0 * 16 + j_1 + 1, I_rf[j_1])
        M_rf[j_1] = T.max(M_rf[j_1], A[i, ...])
    for j_1_wb in T.serial(1, 16):                     # the winners folded into lane 0
        I_rf[0] = T.if_then_else(M_rf[j_1_wb] > M_rf[0], I_rf[j_1_wb],
                                 T.if_then_else(M_rf[j_1_wb] == M_rf[0],
                                                T.min(I_rf[j_1_wb], I_rf[0]), I_rf[0]))
        M_rf[0] = T.if_then_else(I_rf[0] == I_rf[j_1_wb], M_rf[j_1_wb], M_rf[0])
    I[i] = T.if_then_else(M_rf[0] > M[i], I_rf[0], I[i])   # then into I, M: the update
    M[i] = T.max(M[i], M_rf[0])

Exact, bit for bit: each partial winner is the best value of its steps and
the first index where it was reached; folding them by (best value, then
smaller index; the value is the winning lane's, as -0.0 and 0.0 tie but differ)
gives the best value of all steps, bit for bit, and its first index --
*provided the index increases along the loops*, which isl checks over the
nest (refused otherwise, with the two steps); the winner of the steps then
meets the value and index the nest started from by the update itself, which
keeps the earlier on a tie.  A partial winner that no step beat (a lane of
``-inf``, or no step at all) keeps the largest index and loses every fold.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import IllegalTransformError, NotAffineError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, replace
from polypad.ir.loop_names import loop_ref
from polypad.ir.ranges import dtype_range
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import Rewriter, walk
from polypad.transform.facts_at import Facts, facts_at

from .legality import check_rfactor
from .reduction_nest import (
    conjunction,
    conjuncts,
    copy_nest,
    let_values,
    loop_by_var,
    loop_var_names,
)
from .rfactor_arg_data import check_index_not_data
from .rfactor_nest import Factored, factor_axes, partial_buffer, partial_indices


def rfactor_arg(func: n.PrimFunc, loop: n.For, arg, factor_axis: int, where: str):
    """``func`` with the arg-reduction ``arg`` over ``loop`` factored (see the module
    docstring), and its :class:`~.rfactor.Factored`."""
    from analyses.combiners import Combiner

    upd, first = arg.update, arg.index_store
    value_buf, index_buf = upd.buffer, arg.index_buffer
    path = ancestors(func, upd.store)
    seq = path[-2]
    if not (isinstance(seq, n.SeqStmt) and len(seq.stmts) == 2 and seq.stmts[0] is first):
        raise PolypadError(f"{where}: the index and value stores of the argmax into "
                           f"{index_buf.name}, {value_buf.name} are not a sequence of "
                           "their own")
    nest, indices, loops, dropped, axes = factor_axes(
        func, loop, seq, (value_buf, index_buf), factor_axis, where)
    check_index_not_data(nest, arg, indices, loop, where)
    _check_increasing(func, nest, arg, indices, where)
    value_rf = partial_buffer(func, value_buf, axes)
    index_rf = partial_buffer(func, index_buf, axes, taken={value_rf.name})
    k = next(pos for pos, x in enumerate(axes) if x is loop)

    def at(mapping, lane0=False):
        out = partial_indices(axes, mapping)
        return out[:k] + (n.IntImm(0, loop.var.dtype),) + out[k + 1:] if lane0 else out

    def loads(mapping, lane0=False):
        where_ = at(mapping, lane0)
        return n.BufferLoad(value_rf, where_), n.BufferLoad(index_rf, where_)

    # The update: the two stores on the partial winners, as they were written.
    v_acc, i_acc = loads({})
    on_rf = _Loads({value_buf: v_acc, index_buf: i_acc}, first.indices)
    update = replace(nest[0], seq, n.SeqStmt((
        n.BufferStore(index_rf, on_rf.visit(first.value), i_acc.indices),
        n.BufferStore(value_rf, upd.value(v_acc, upd.operand), v_acc.indices))))
    taken = loop_var_names(func)
    worst = Combiner("min").identity(index_buf.dtype)  # the largest index: loses every tie
    init, init_loops = copy_nest(nest, dropped, "_init", taken, lambda m: n.SeqStmt((
        n.BufferStore(value_rf, upd.combiner.identity(value_rf.dtype), at(m)),
        n.BufferStore(index_rf, worst, at(m)))))

    def fold(m):
        (v, i), (v0, i0) = loads(m), loads(m, lane0=True)
        # Written without and/or: LLVM makes selects of it, not branches.
        index = n.Select(arg.beats(v, v0), i, n.Select(n.Eq(v, v0), n.Min(i, i0), i0))
        # The value of the lane whose index won (I_rf[0] is stored first): equal
        # values may differ in their bits (-0.0 and 0.0), and the nest keeps the first
        # best step's.  Two lanes hold one index only where no step beat either, both
        # the identity.
        value = n.Select(n.Eq(i0, i), v, v0)
        return n.SeqStmt((n.BufferStore(index_rf, index, i0.indices),
                          n.BufferStore(value_rf, value, v0.indices)))

    folded, fold_loops = copy_nest(nest, dropped, "_wb", taken, fold)
    folded, fold_loops = _from_second(folded, fold_loops, loops.index(loop), dropped, loops,
                                      facts_at(func, nest[0], assumptions=True))

    def final(m):
        v0, i0 = loads(m, lane0=True)
        element = tuple(substitute(e, m) for e in indices)
        v, i = n.BufferLoad(value_buf, element), n.BufferLoad(index_buf, element)
        return n.SeqStmt((n.BufferStore(index_buf, n.Select(arg.beats(v0, v), i0, i), element),
                          n.BufferStore(value_buf, upd.value(v, v0), element)))

    back, back_loops = copy_nest(nest, dropped | {loop.var}, "_wb", taken, final,
                                 fixed={loop.var: loop.min})
    # Flat, as the parser reads it: without loops of its own, back is two stores.
    body = n.SeqStmt(tuple(y for x in (init, update, folded, back)
                           for y in (x.stmts if isinstance(x, n.SeqStmt) else (x,))))
    new = replace(func, nest[0], n.Allocate(value_rf, n.Allocate(index_rf, body)))
    check_rfactor(new, where)
    return new, Factored(value_rf.name, [loop_ref(new, x) for x in init_loops],
                         [loop_ref(new, loop_by_var(new, x.var, holding=update))
                          for x in loops],
                         [loop_ref(new, x) for x in fold_loops + back_loops],
                         index_buffer=index_rf.name)


class _Loads(Rewriter):
    """Loads of the element ``indices`` of the keys' buffers replaced by the values."""

    def __init__(self, loads: dict, indices):
        self.loads, self.indices = loads, indices

    def visit_BufferLoad(self, node: n.BufferLoad):
        if node.buffer in self.loads and node.indices == self.indices:
            return self.loads[node.buffer]
        return self.generic_visit(node)


def _from_second(folded, fold_loops, position: int, dropped: set, loops, facts: Facts):
    """The fold's copy of the factored loop started one later (lane 0 is the fold's
    accumulator); the copies of the other loops as they were.

    Only where ``min + 1`` and ``extent - 1`` cannot wrap (``facts``: what holds where
    the nest stood, the assumptions before it included); elsewhere the copy keeps the loop's
    range: folding lane 0 into itself changes nothing (it beats nothing, and the
    value of the lane whose index won is its own)."""
    kept = [x for x in loops if x.var not in dropped]
    k = next(i for i, x in enumerate(kept) if x is loops[position])
    old = fold_loops[k]
    if not _shift_fits(old, facts):
        return folded, fold_loops
    new = n.For(old.var, _plus(old.min, 1), _plus(old.extent, -1), old.kind, old.body)
    folded = replace(folded, old, new) if folded is not old else new
    fold_loops = [new if x is old else x for x in fold_loops]
    # The copies outside the factored loop hold the old one: find them again.
    return folded, [_find(folded, x.var) for x in fold_loops]


def _shift_fits(loop: n.For, facts: Facts) -> bool:
    """Whether ``loop.min + 1`` and ``loop.extent - 1`` stay in the counter's dtype
    wherever the loop may be entered (``False`` where that is not known)."""
    lo, hi = dtype_range(loop.var.dtype)
    for e, limit, holds in ((loop.min, hi, n.Lt), (loop.extent, lo, n.Gt)):
        if not dtypes.is_int(e.dtype) or e.dtype != loop.var.dtype:
            return False
        if isinstance(e, n.IntImm):
            if not (e.value < limit if holds is n.Lt else e.value > limit):
                return False
        elif facts.decide(holds(e, n.IntImm(limit, e.dtype))) is not True:
            return False
    return True


def _plus(e: n.Expr, k: int) -> n.Expr:
    if isinstance(e, n.IntImm):
        return n.IntImm(e.value + k, e.dtype)
    return n.Add(e, n.IntImm(k, e.dtype))


def _find(root, var):
    return next(x for x in walk(root) if isinstance(x, n.For) and x.var is var)


def _check_increasing(func, nest, arg, indices, where: str) -> None:
    """Refuse unless the index stored increases strictly from step to step of the
    nest's reduction loops, for each element (isl decides it)."""
    from polypad.model.conditions import to_set

    lets = let_values(nest)
    loops = [x for x in nest if isinstance(x, n.For)]
    index = substitute(arg.index, lets)
    spatial = {v for e in indices for v in free_vars(e)}
    later = {x.var: n.Var(x.var.name + "'", x.var.dtype) for x in loops}
    steps = [x for x in loops if x.var not in spatial]

    def domain(rename):
        parts = []
        for x in nest:
            if isinstance(x, n.For):
                lo = substitute(substitute(x.min, lets), rename)
                v = rename.get(x.var, x.var)
                parts += [n.Ge(v, lo), n.Lt(v, n.Add(lo, substitute(substitute(x.extent, lets),
                                                                     rename)))]
            elif isinstance(x, n.IfThenElse):
                parts += [substitute(substitute(c, lets), rename) for c in conjuncts(x.condition)]
        return parts

    before = None
    for depth, x in enumerate(steps):
        same = [n.Eq(y.var, later[y.var]) for y in steps[:depth]]
        term = conjunction(same + [n.Lt(x.var, later[x.var])])
        before = term if before is None else n.Or(before, term)
    if before is None:
        return  # no step follows another
    parts = domain({}) + domain(later) + [n.Eq(x.var, later[x.var]) for x in loops
                                          if x.var in spatial]
    parts += [before, n.Ge(index, substitute(index, later))]
    space = [x.var for x in loops] + [later[x.var] for x in loops]
    try:
        bad = to_set(conjunction(parts), space)
    except NotAffineError as error:
        raise PolypadError(f"{where}: cannot tell whether the index stored into "
                           f"{arg.index_buffer.name} increases from step to step: "
                           f"{error}") from error
    if bad.is_empty():
        return
    point = bad.sample_point()
    names = [v.name for v in space]
    values = {name: int(point.get_coordinate_val(isl.dim_type.set, k).to_python())
              for k, name in enumerate(names)}
    raise IllegalTransformError(
        f"{where}: the index stored into {arg.index_buffer.name} does not increase from "
        f"step to step ({_show(values, loops, later)}), so the first index of the best "
        f"value of {arg.update.buffer.name} would not be the smallest: folding partial "
        "winners would pick another on a tie", values)


def _show(values, loops, later) -> str:
    a = ", ".join(f"{x.var.name}={values[x.var.name]}" for x in loops)
    b = ", ".join(f"{x.var.name}={values[later[x.var].name]}" for x in loops)
    return f"({a}) runs before ({b})"
