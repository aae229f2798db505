"""The IR rewrites behind ``rfactor`` and ``decompose_reduction``.

A *reduction* is a store ``X[idx] = X[idx] + e`` (or ``e + X[idx]``, or
``*``) whose value reads ``X`` nowhere else.  The loops around it whose
variables appear in ``idx`` are its *spatial* loops; the others are
*reduction* loops: their iterations all update one element.

``rfactor(f, k)`` on a reduction over ``k`` (see
:meth:`~polypad.schedule.kind_primitives.KindPrimitives.rfactor`)::

    for i, k in T.grid(8, 16):                     # before
        B[i] = B[i] + A[i, k]

    B_rf = T.alloc_buffer((16, 8), "float32")      # after
    for i_init, k_init in T.grid(8, 16):
        B_rf[k_init, i_init] = T.float32(0)
    for i, k in T.grid(8, 16):
        B_rf[k, i] = B_rf[k, i] + A[i, k]
    for i_wb, k_wb in T.grid(8, 16):
        B[i_wb] = B[i_wb] + B_rf[k_wb, i_wb]

``decompose(f, block, loop)`` moves a reduction's init (``B[i] = 0``) out
to a nest of its own before ``loop``.
"""

from __future__ import annotations

import dataclasses

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, replace
from polypad.ir.naming import fresh_name
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import walk

from .legality import check_decompose_reduction, check_rfactor

_OPS = {n.Add: 0, n.Mul: 1}  # reduction operator -> its identity


@dataclasses.dataclass(frozen=True)
class Factored:
    """What ``rfactor`` made: the partial-result buffer and the loops of each nest,
    outermost first (``update`` keeps the original loops)."""

    buffer: str
    init: list[str]
    update: list[str]
    write_back: list[str]


@dataclasses.dataclass(frozen=True)
class _Reduction:
    store: n.BufferStore
    op: type
    accumulator_first: bool  # X[idx] + e rather than e + X[idx]
    update: n.Expr  # e

    def value(self, acc: n.Expr, other: n.Expr) -> n.Expr:
        return self.op(acc, other) if self.accumulator_first else self.op(other, acc)


def reduction_of(store: n.BufferStore) -> _Reduction | None:
    """``store`` as a reduction, or ``None`` when it is not one."""
    value = store.value
    if type(value) not in _OPS:
        return None
    acc = n.BufferLoad(store.buffer, store.indices)
    for first, (mine, other) in ((True, (value.a, value.b)), (False, (value.b, value.a))):
        if mine == acc and not _reads(other, store.buffer):
            return _Reduction(store, type(value), first, other)
    return None


def rfactor(func: n.PrimFunc, loop: n.For, factor_axis: int, name: str
            ) -> tuple[n.PrimFunc, Factored]:
    """``func`` with the reduction over ``loop`` factored (see the module docstring)."""
    where = f"rfactor: the loop over {name}"
    stores = [x for x in walk(loop.body) if isinstance(x, (n.BufferStore, n.Evaluate))]
    if len(stores) != 1 or not isinstance(stores[0], n.BufferStore):
        held = ("a T.evaluate" if len(stores) == 1
                else f"{len(stores)} statements" if stores else "no statement")
        raise PolypadError(f"{where} must hold one store, a reduction; it holds {held}")
    red = reduction_of(stores[0])
    if red is None:
        raise PolypadError(f"{where} holds no reduction X[idx] = X[idx] + e (or *): "
                           f"{stores[0].buffer.name} is not updated from itself")
    store = red.store
    nest = _single_statement_nest(func, store)
    if not any(x is loop for x in nest):
        raise PolypadError(f"{where} holds more than the reduction into "
                           f"{store.buffer.name}; rfactor a loop around it alone")
    indexing = {v for i in store.indices for v in free_vars(i)}
    if loop.var in indexing:
        raise PolypadError(f"{where} indexes {store.buffer.name}: it is not a reduction loop")
    loops = [x for x in nest if isinstance(x, n.For)]
    dropped = {x.var for x in loops if x.var not in indexing and x is not loop}
    kept = [x for x in loops if x.var in indexing or x is loop]
    spatial = [x for x in kept if x is not loop]
    if not 0 <= factor_axis <= len(spatial):
        raise PolypadError(f"rfactor: factor_axis must be in [0, {len(spatial)}], "
                           f"not {factor_axis}")
    axes = spatial[:factor_axis] + [loop] + spatial[factor_axis:]
    params = {p for p in func.params if isinstance(p, n.Var)}
    for x in axes:
        if not (isinstance(x.extent, n.IntImm) or x.extent in params):
            raise PolypadError(f"rfactor: the loop over {x.var.name} has the extent "
                               f"{x.extent}, neither a constant nor a parameter")
        if dropped & set(free_vars(x.min)):
            raise PolypadError(f"rfactor: the start of the loop over {x.var.name} depends "
                               "on a reduction loop")
    rf = n.Buffer(fresh_name(_buffer_names(func), f"{store.buffer.name}_rf"),
                  tuple(x.extent if isinstance(x.extent, n.Var) else x.extent.value
                        for x in axes), store.buffer.dtype)

    def rf_at(mapping: dict) -> tuple[n.Expr, ...]:
        return tuple(_offset(mapping.get(x.var, x.var), substitute(x.min, mapping))
                     for x in axes)

    # The update: the nest as it was, accumulating into X_rf.
    acc = n.BufferLoad(rf, rf_at({}))
    update = replace(nest[0], store, n.BufferStore(rf, red.value(acc, red.update), acc.indices))
    # Init and write-back: the loops that index X_rf, and the guards over them only.
    taken = {x.var.name for x in walk(func.body) if isinstance(x, n.For)}
    init, init_loops = _copy_nest(nest, dropped, "_init", taken, lambda m: n.BufferStore(
        rf, _identity(red.op, rf.dtype), rf_at(m)))
    out = n.BufferLoad(store.buffer, store.indices)
    back, back_loops = _copy_nest(nest, dropped, "_wb", taken, lambda m: n.BufferStore(
        store.buffer, red.value(substitute(out, m), n.BufferLoad(rf, rf_at(m))),
        tuple(substitute(i, m) for i in store.indices)))
    new = replace(func, nest[0], n.Allocate(rf, n.SeqStmt((init, update, back))))
    check_rfactor(new, where)
    return new, Factored(rf.name, [x.var.name for x in init_loops],
                         [x.var.name for x in loops], [x.var.name for x in back_loops])


def decompose(func: n.PrimFunc, block: n.Block | None, loop: n.For
              ) -> tuple[n.PrimFunc, list[n.For]]:
    """``func`` with the init of a reduction of ``block`` moved before ``loop``, and the
    copied loops: the init is the first store under ``loop`` (inside ``block``; anywhere
    for ``None``) that writes a buffer without reading it and that a reduction under
    ``loop`` updates."""
    inside_block = {id(x) for x in walk(func.body if block is None else block)}
    stores = [x for x in walk(loop) if isinstance(x, n.BufferStore) and id(x) in inside_block]
    updated = {id(r.store.buffer) for r in map(reduction_of, stores) if r is not None}
    init = next((s for s in stores if id(s.buffer) in updated
                 and not _reads(s.value, s.buffer)), None)
    if init is None:
        what = "the function" if block is None else f"block {block.name!r}"
        raise PolypadError(f"decompose_reduction: no reduction of {what} "
                           f"with an init store under the loop over {loop.var.name}")
    path = ancestors(func, init)
    start = next(k for k, x in enumerate(path) if x is loop)
    between = path[start:-1]
    for x in between:
        if not (isinstance(x, n.For | n.SeqStmt | n.Block)
                or isinstance(x, n.IfThenElse) and x.else_case is None):
            raise PolypadError(f"decompose_reduction: the init sits under a "
                               f"{type(x).__name__} inside the loop over {loop.var.name}")
    check_decompose_reduction(func, init, loop)
    taken = {x.var.name for x in walk(func.body) if isinstance(x, n.For)}
    chain = [x for x in between if isinstance(x, n.For | n.IfThenElse)]
    pinned = _pinned(chain)
    guards = [guard for _, guard in pinned.values()]
    chain = [x for x in chain if not (isinstance(x, n.For) and x.var in pinned
                                      or any(x is guard for guard in guards))]
    values = {var: value for var, (value, _) in pinned.items()}
    copy, loops = _copy_nest(chain, set(), "_init", taken, lambda m: n.BufferStore(
        init.buffer, substitute(init.value, m), tuple(substitute(i, m) for i in init.indices)),
        values)
    placed = _insert_before(func, loop, copy)
    path = ancestors(placed, init)  # the loop and the init are the very same nodes
    return _remove(placed, path[next(k for k, x in enumerate(path) if x is loop):], init), loops


# ---------------------------------------------------------------- helpers


def _reads(expr: n.Expr, buffer: n.Buffer) -> bool:
    return any(isinstance(x, n.BufferLoad) and x.buffer is buffer for x in walk(expr))


def _single_statement_nest(func: n.PrimFunc, store: n.BufferStore) -> list[n.Stmt]:
    """The loops, ifs (without else) and blocks just around ``store`` that hold nothing
    else, outermost first; they stop at a let, an allocation or a sequence."""
    path = ancestors(func, store)[:-1]
    nest: list[n.Stmt] = []
    for x in reversed(path):
        if (isinstance(x, n.For | n.Block)
                or isinstance(x, n.IfThenElse) and x.else_case is None):
            nest.insert(0, x)
        else:
            break
    if not nest or not isinstance(nest[0], n.For):
        nest = nest[next((k for k, x in enumerate(nest) if isinstance(x, n.For)), len(nest)):]
    return nest


def _copy_nest(nest, dropped: set, suffix: str, taken: set, leaf, fixed=None):
    """Copies of the loops of ``nest`` over no ``dropped`` variable, with new variables
    ``<var><suffix>``, and the conjuncts of guards that mention no dropped variable, around
    ``leaf(mapping)``; returns the copy and its loops.  Blocks are not copied: a
    block name must stay unique.  ``fixed`` maps variables whose loops are left
    out to their values."""
    mapping: dict = dict(fixed or {})
    layers: list = []
    for x in nest:
        if isinstance(x, n.For):
            if x.var in dropped:
                continue
            var = n.Var(fresh_name(taken, x.var.name + suffix), x.var.dtype)
            layers.append(("for", x, var))
            mapping[x.var] = var
        elif isinstance(x, n.IfThenElse):
            # The conjuncts over kept variables still hold; the others are left out.
            kept = [c for c in _conjuncts(x.condition) if not dropped & set(free_vars(c))]
            if kept:
                condition = kept[0]
                for c in kept[1:]:
                    condition = n.And(condition, c)
                layers.append(("if", condition, None))
    body: n.Stmt = leaf(mapping)
    loops = []
    for kind, x, var in reversed(layers):
        if kind == "for":
            body = n.For(var, substitute(x.min, mapping), substitute(x.extent, mapping),
                         n.ForKind.SERIAL, body)
            loops.insert(0, body)
        else:
            body = n.IfThenElse(substitute(x, mapping), body)
    return body, loops


def _pinned(chain) -> dict:
    """The loops of ``chain`` that a guard below them pins to one value in their range
    (the T.init-style ``if k == 0:``), as ``{var: (value, guard)}``: the init's copy
    runs that iteration alone, without the loop and the guard."""
    out = {}
    loops = {x.var: x for x in chain if isinstance(x, n.For)}
    for x in chain:
        if not isinstance(x, n.IfThenElse) or not isinstance(x.condition, n.Eq):
            continue
        a, b = x.condition.a, x.condition.b
        var, value = (a, b) if isinstance(b, n.IntImm) else (b, a)
        loop = loops.get(var) if isinstance(var, n.Var) else None
        if (loop is not None and var not in out and isinstance(value, n.IntImm)
                and isinstance(loop.min, n.IntImm) and isinstance(loop.extent, n.IntImm)
                and loop.min.value <= value.value < loop.min.value + loop.extent.value):
            out[var] = (value, x)
    return out


def _conjuncts(condition: n.Expr) -> list[n.Expr]:
    if isinstance(condition, n.And):
        return _conjuncts(condition.a) + _conjuncts(condition.b)
    return [condition]


def _identity(op: type, dtype: str) -> n.Expr:
    value = _OPS[op]
    if dtype.startswith(("int", "uint")):
        return n.IntImm(value, dtype)
    return n.FloatImm(float(value), dtype)


def _offset(var: n.Expr, start: n.Expr) -> n.Expr:
    return var if isinstance(start, n.IntImm) and start.value == 0 else n.Sub(var, start)


def _buffer_names(func: n.PrimFunc) -> set:
    names = {p.name for p in func.params if isinstance(p, n.Buffer)}
    return names | {x.buffer.name for x in walk(func.body) if isinstance(x, n.Allocate)}


def _remove(func: n.PrimFunc, path, store: n.BufferStore) -> n.PrimFunc:
    """``func`` without ``store``, taken from the nearest sequence holding it below
    ``path[0]`` (the loop the init moves before)."""
    for k in range(len(path) - 2, 0, -1):
        parent = path[k]
        if isinstance(parent, n.SeqStmt):
            rest = tuple(s for s in parent.stmts if s is not path[k + 1])
            return replace(func, parent, rest[0] if len(rest) == 1 else n.SeqStmt(rest))
    raise PolypadError("decompose_reduction: the init is all that its loops hold")


def _insert_before(func: n.PrimFunc, stmt: n.Stmt, new: n.Stmt) -> n.PrimFunc:
    """``func`` with ``new`` just before ``stmt``, in the sequence holding it if any
    (the parser reads ``a; b; c`` as one flat sequence)."""
    path = ancestors(func, stmt)
    parent = path[-2] if len(path) > 1 else None
    if isinstance(parent, n.SeqStmt):
        k = next(k for k, x in enumerate(parent.stmts) if x is stmt)
        return replace(func, parent, n.SeqStmt(parent.stmts[:k] + (new,) + parent.stmts[k:]))
    return replace(func, stmt, n.SeqStmt((new, stmt)))
