"""The IR rewrites of the GPU reductions: ``tree_reduce`` and ``atomic``.

``tree_reduce(f, loop)`` turns a combine loop over ``T`` partial results, a
power of two (``rfactor``'s write-back, ``X[idx] = X[idx] + X_rf[k]``),
into a tree of ``log2 T`` steps, each a loop of half the threads of the one
before, folding the upper half of the partial results into the lower, then
one fold of ``X_rf[0]`` into ``X``::

    for k_wb in range(8):                      # before
        B[i] = B[i] + B_rf[k_wb]

    for k_wb_s0 in range(4):                   # after
        B_rf[k_wb_s0] = B_rf[k_wb_s0] + B_rf[k_wb_s0 + 4]
    for k_wb_s1 in range(2):
        B_rf[k_wb_s1] = B_rf[k_wb_s1] + B_rf[k_wb_s1 + 2]
    for k_wb_s2 in range(1):
        B_rf[k_wb_s2] = B_rf[k_wb_s2] + B_rf[k_wb_s2 + 1]
    B[i] = B[i] + B_rf[0]

Bound to ``threadIdx.x``, each step is one pass of the block's threads, and
the barrier plan (:mod:`analyses.gpu_sync`) puts exactly one barrier between
two steps (thread ``t`` of step ``s + 1`` reads what thread ``t + h`` wrote
in step ``s``) and none inside one.  It reassociates the combine (a float
sum may change in the last bits), as ``rfactor`` does; the partial results
are overwritten, so nothing may read them after the loop
(:func:`~.gpu_legality.check_tree_reduce`).

``atomic(f, loop)`` marks the one reduction update under ``loop`` as an
atomic read-modify-write on a GPU: it wraps the store in a block
``<X>_atomic`` annotated ``{"atomic": combiner}``.  The serial meaning is
unchanged; :mod:`analyses.gpu_sync` lets two instances of atomic updates
of one element with one combiner run in either order (they commute), and
the ``cuda`` target emits ``cuda.atomic.add`` (``max``, ``min``,
``and_``, ``or_``, ``xor``).
"""

from __future__ import annotations

from analyses.combiners import update_of
from analyses.gpu_atomics import ATOMIC, ATOMICS
from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.nodes_block import BlockHeader
from polypad.ir.operators import const
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import walk


def _through(stmt: n.Stmt) -> n.Stmt:
    while isinstance(stmt, n.Block):
        stmt = stmt.body
    return stmt


def tree_reduce(func: n.PrimFunc, loop: n.For) -> tuple[n.PrimFunc, n.Buffer, n.SeqStmt]:
    """``func`` with the combine ``loop`` made a tree (module docstring), the buffer of
    partial results it overwrites and the tree.  :class:`PolypadError` where ``loop`` is not a
    combine of a power of two of partial results."""
    name = loop.var.name
    store = _through(loop.body)
    update = update_of(store)
    if update is None or not isinstance(update.operand, n.BufferLoad):
        raise PolypadError(f"tree_reduce: the body of loop {name!r} must be one update "
                           "X[idx] = combine(X[idx], X_rf[..., k, ...]) of a combiner "
                           "+, *, max, min, &, |, ^")
    partial = update.operand
    places = [k for k, e in enumerate(partial.indices) if loop.var in free_vars(e)]
    if (len(places) != 1 or partial.indices[places[0]] != loop.var
            or any(loop.var in free_vars(e) for e in store.indices)):
        raise PolypadError(f"tree_reduce: loop {name!r} must index one axis of the partial "
                           f"results {partial.buffer.name} by itself, and not {store.buffer.name}")
    extent = loop.extent.value if isinstance(loop.extent, n.IntImm) else None
    if not (isinstance(loop.min, n.IntImm) and loop.min.value == 0 and extent is not None
            and extent >= 2 and extent & (extent - 1) == 0):
        raise PolypadError(f"tree_reduce: loop {name!r} must run over range(T) for a constant "
                           f"power of two T >= 2, not from {loop.min} for {loop.extent}")
    where = places[0]
    steps: list[n.Stmt] = []
    half = extent // 2
    level = 0
    while half >= 1:
        var = n.Var(f"{name}_s{level}", loop.var.dtype)
        low = list(partial.indices)
        low[where] = var
        high = list(partial.indices)
        high[where] = var + half
        acc = n.BufferLoad(partial.buffer, tuple(low))
        value = update.value(acc, n.BufferLoad(partial.buffer, tuple(high)))
        body = n.BufferStore(partial.buffer, value, tuple(low))
        steps.append(n.For(var, const(0, var.dtype), const(half, var.dtype), n.ForKind.SERIAL,
                           body))
        half //= 2
        level += 1
    first = substitute(store, {loop.var: const(0, loop.var.dtype)})
    steps.append(first)
    tree = n.SeqStmt(tuple(steps))
    return replace(func, loop, tree), partial.buffer, tree


def atomic(func: n.PrimFunc, loop: n.For) -> n.PrimFunc:
    """``func`` with the one reduction update in ``loop``'s body (through loops and
    blocks) wrapped in an atomic block (module docstring)."""
    stores = [x for x in walk(loop.body) if isinstance(x, n.BufferStore)]
    name = loop.var.name
    if len(stores) != 1:
        raise PolypadError(f"atomic: loop {name!r} must hold one store, not {len(stores)}")
    store = stores[0]
    update = update_of(store)
    if update is None:
        raise PolypadError(f"atomic: the store to {store.buffer.name} under loop {name!r} is "
                           "no update X[idx] = combine(X[idx], v)")
    known = ATOMICS.get(update.combiner.name)
    if known is None or store.buffer.dtype not in known[1]:
        raise PolypadError(
            f"atomic: numba.cuda has no atomic {update.combiner} on {store.buffer.dtype} "
            "(it has + on int32, float32, float64; max and min on int32, int64, uint32, "
            "uint64, float32, float64; &, |, ^ on int32, int64, uint32, uint64)")
    header = BlockHeader(annotations=((ATOMIC, update.combiner.name),))
    wrapped = n.Block(f"{store.buffer.name}_atomic", store, header)
    return replace(func, store, wrapped)

