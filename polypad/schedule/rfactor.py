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
``decompose_reduction`` is); the factored update then starts from it.  An
argmax's ``T.init()`` starts both of its buffers (``M[vi] =
T.min_value("float32")``, ``I[vi] = -1``): both stores move out, and the
write-back meets them as the original's first step would (a row no value
beats keeps ``I = -1``).
"""

from __future__ import annotations

import dataclasses

from polypad.errors import IllegalTransformError, PolypadError
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
from .update_lets import inline_update_lets

__all__ = ["Factored", "rfactor"]

_FORMS = "X[idx] = combine(X[idx], e) for a combiner +, *, max, min, &, |, ^"


def rfactor(func: n.PrimFunc, loop: n.For, factor_axis: int, name: str
            ) -> tuple[n.PrimFunc, Factored]:
    """``func`` with the reduction over ``loop`` factored (see the module docstring)."""
    # analyses imports polypad, whose import runs this module: imported on use.
    from analyses.combiners import arg_update_of, update_of

    where = f"rfactor: the loop over {name}"
    func, loop = unshared(func, loop)
    func, loop = inline_update_lets(func, loop)
    stores = [x for x in walk(loop.body) if isinstance(x, (n.BufferStore, n.Evaluate))]
    decomposed = None
    if _init_form(func, stores):
        func, decomposed = _decompose_init(func, stores[-1])
        loop = loop_by_var(func, loop.var, holding=stores[-1])
        stores = [x for x in walk(loop.body) if isinstance(x, (n.BufferStore, n.Evaluate))]
    if len(stores) == 2 and arg_update_of(*stores) is not None:
        new, made = rfactor_arg(func, loop, arg_update_of(*stores), factor_axis, where)
        return new, dataclasses.replace(made, decomposed=decomposed)
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
    init's stores (of the updated buffers, at the updated element, each reading not
    its own) alone under an ``if`` of their own, first in a sequence whose other
    statement holds the update -- one reduction's, or an argmax's index and value
    stores (then the sequence's other two statements)."""
    from analyses.combiners import arg_update_of, update_of

    for count in (1, 2):
        inits, updates = stores[:-count], stores[-count:]
        if not inits:
            continue
        if count == 1:
            u = update_of(updates[0])
            buffers = None if u is None else [u.buffer]
        else:
            arg = arg_update_of(*updates)
            buffers = None if arg is None else [arg.index_buffer, arg.update.buffer]
        if buffers is not None and _guarded_inits(func, inits, updates, buffers):
            return True
    return False


def _guarded_inits(func: n.PrimFunc, inits, updates, buffers) -> bool:
    """Whether ``inits`` start ``buffers`` (one store each) alone under an ``if``,
    first in a sequence with ``updates`` (see :func:`_init_form`)."""
    upd = updates[-1]
    if not all(isinstance(x, n.BufferStore) and any(x.buffer is b for b in buffers)
               and x.indices == upd.indices and not reads(x.value, x.buffer) for x in inits):
        return False
    if len({id(x.buffer) for x in inits}) != len(inits):
        return False
    path = ancestors(func, inits[0])
    body = inits[0] if len(inits) == 1 else path[-2]
    if len(inits) > 1 and not (isinstance(body, n.SeqStmt) and len(body.stmts) == len(inits)
                               and all(a is b for a, b in zip(body.stmts, inits, strict=True))):
        return False
    where = next(k for k, x in enumerate(path) if x is body)
    if where < 2:
        return False
    guard, seq = path[where - 1], path[where - 2]
    if not (isinstance(guard, n.IfThenElse) and guard.else_case is None
            and isinstance(seq, n.SeqStmt) and len(seq.stmts) == 1 + len(updates)
            and seq.stmts[0] is guard):
        return False
    if len(updates) == 2:  # an argmax's stores: the sequence's own
        return all(a is b for a, b in zip(seq.stmts[1:], updates, strict=True))
    return all(is_layer(x) for x in ancestors(func, upd)[where - 1:-1])


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
    try:
        new, loops = decompose(func, None, top)
    except IllegalTransformError as error:
        # Say whose step it was: the user asked for rfactor, not for the decomposition.
        raise IllegalTransformError(f"rfactor: the reduction's T.init() cannot move before "
                                    f"the nest, as rfactor needs: {error}",
                                    error.evidence) from error
    return new, [loop_ref(new, x) for x in loops]
