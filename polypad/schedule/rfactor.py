"""The IR rewrite behind ``rfactor``: a reduction's partial results in a buffer of their own.

A *reduction* is an update ``X[idx] = combine(X[idx], e)`` for a combiner of
:mod:`analyses.combiners` (``+``, ``*``, ``max``, ``min``, and ``&``,
``|``, ``^`` on integers, in any of the forms TVM writes).  The loops around
it whose variables appear in ``idx`` are its *spatial* loops; the others are
*reduction* loops: their iterations all update one element.

``rfactor(f, k)`` on a reduction over ``k`` (see
:meth:`~polypad.schedule.kind_primitives.KindPrimitives.rfactor`)::

    for i, k in T.grid(8, 16):                     # before
        B[i] = T.max(B[i], A[i, k])

    B_rf = T.alloc_buffer((16, 8), "float32")      # after
    for i_init, k_init in T.grid(8, 16):
        B_rf[k_init, i_init] = T.float32("-inf")   # the combiner's identity
    for i, k in T.grid(8, 16):
        B_rf[k, i] = T.max(B_rf[k, i], A[i, k])
    for i_wb, k_wb in T.grid(8, 16):
        B[i_wb] = T.max(B[i_wb], B_rf[k_wb, i_wb])

An argmax (the index store, then the value's ``max`` update) is factored
into two buffers by :mod:`.rfactor_arg`.

A reduction with its init in the nest (TVM's ``T.init()``: an ``if`` on the
reduce axes at their starts, first in the block) has the init moved out
first, before the nest (:func:`.decompose.decompose`, checked as
``decompose_reduction`` is); the factored update then starts from it.
"""

from __future__ import annotations

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, replace
from polypad.ir.loop_names import loop_ref
from polypad.ir.substitute import substitute
from polypad.ir.visitor import walk

from .decompose import decompose
from .legality import check_rfactor
from .reduction_nest import (
    copy_nest,
    is_layer,
    loop_by_var,
    loop_var_names,
    reads,
    unshared,
)
from .rfactor_arg import rfactor_arg
from .rfactor_nest import Factored, factor_axes, partial_buffer, partial_indices

__all__ = ["Factored", "rfactor"]

_FORMS = "X[idx] = combine(X[idx], e) for a combiner +, *, max, min, &, |, ^"


def rfactor(func: n.PrimFunc, loop: n.For, factor_axis: int, name: str
            ) -> tuple[n.PrimFunc, Factored]:
    """``func`` with the reduction over ``loop`` factored (see the module docstring)."""
    # analyses imports polypad, whose import runs this module: imported on use.
    from analyses.combiners import arg_update_of, update_of

    where = f"rfactor: the loop over {name}"
    func, loop = unshared(func, loop)
    stores = [x for x in walk(loop.body) if isinstance(x, (n.BufferStore, n.Evaluate))]
    decomposed = None
    if len(stores) == 2 and _init_form(func, stores):
        func, decomposed = _decompose_init(func, stores[1])
        loop = loop_by_var(func, loop.var, holding=stores[1])
        stores = [x for x in walk(loop.body) if isinstance(x, (n.BufferStore, n.Evaluate))]
    if len(stores) == 2 and decomposed is None and arg_update_of(*stores) is not None:
        return rfactor_arg(func, loop, arg_update_of(*stores), factor_axis, where)
    if len(stores) != 1 or not isinstance(stores[0], n.BufferStore):
        held = ("a T.evaluate" if len(stores) == 1
                else f"{len(stores)} statements" if stores else "no statement")
        raise PolypadError(f"{where} must hold one store, a reduction; it holds {held} "
                           "(a reduction may also hold its T.init(); an argmax, its index "
                           "store then its value store)")
    red = update_of(stores[0])
    if red is None:
        raise PolypadError(f"{where} holds no reduction {_FORMS}: "
                           f"{stores[0].buffer.name} is not updated from itself")
    store = red.store
    nest, indices, loops, dropped, axes = factor_axes(func, loop, store, (store.buffer,),
                                                      factor_axis, where)
    rf = partial_buffer(func, store.buffer, axes)

    def rf_at(mapping: dict) -> tuple[n.Expr, ...]:
        return partial_indices(axes, mapping)

    # The update: the nest as it was, accumulating into X_rf.
    acc = n.BufferLoad(rf, rf_at({}))
    update = replace(nest[0], store, n.BufferStore(rf, red.value(acc, red.operand), acc.indices))
    # Init and write-back: the loops that index X_rf, and the guards over them only.
    taken = loop_var_names(func)
    init, init_loops = copy_nest(nest, dropped, "_init", taken, lambda m: n.BufferStore(
        rf, red.combiner.identity(rf.dtype), rf_at(m)))
    back, back_loops = copy_nest(nest, dropped, "_wb", taken, lambda m: n.BufferStore(
        store.buffer, red.value(n.BufferLoad(store.buffer, _at(indices, m)),
                                n.BufferLoad(rf, rf_at(m))), _at(indices, m)))
    new = replace(func, nest[0], n.Allocate(rf, n.SeqStmt((init, update, back))))
    check_rfactor(new, where)
    return new, Factored(rf.name, [loop_ref(new, x) for x in init_loops],
                         [loop_ref(new, loop_by_var(new, x.var, holding=update))
                          for x in loops],
                         [loop_ref(new, x) for x in back_loops], decomposed)


def _at(indices, mapping) -> tuple[n.Expr, ...]:
    return tuple(substitute(i, mapping) for i in indices)


def _init_form(func: n.PrimFunc, stores) -> bool:
    """Whether ``stores`` are an init and its update in TVM's ``T.init()`` form: the
    init, under an ``if`` of its own, first in a sequence whose other statement holds
    the update of the same element."""
    from analyses.combiners import update_of

    init, upd = stores
    u = update_of(upd)
    if (u is None or not isinstance(init, n.BufferStore) or init.buffer is not u.buffer
            or init.indices != upd.indices or reads(init.value, init.buffer)):
        return False
    path = ancestors(func, init)
    guard, seq = path[-2], path[-3] if len(path) > 2 else None
    return (isinstance(guard, n.IfThenElse) and guard.else_case is None
            and isinstance(seq, n.SeqStmt) and len(seq.stmts) == 2 and seq.stmts[0] is guard
            and all(is_layer(x) for x in ancestors(func, upd)[len(path) - 2:-1]))


def _decompose_init(func: n.PrimFunc, upd: n.BufferStore) -> tuple[n.PrimFunc, list[str]]:
    """``func`` with the ``T.init()`` of ``upd``'s reduction moved out before the nest,
    and the names of the init's loops."""
    path = ancestors(func, upd)
    # The sequence of the init's guard and the update.
    seq = next(x for x in reversed(path[:-1]) if isinstance(x, n.SeqStmt))
    top = None
    for x in reversed(path[:-1]):
        if not (is_layer(x) or x is seq):
            break
        if isinstance(x, n.For):
            top = x
    new, loops = decompose(func, None, top)
    return new, [loop_ref(new, x) for x in loops]
