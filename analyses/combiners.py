"""Reduction updates and their combiners: which stores fold a value into an element.

A *reduction update* is a store ``X[e] = combine(X[e], v)`` where ``v`` does
not read ``X`` and ``combine`` is an associative and commutative operation
with an identity -- a *combiner*.  TVM writes them as polypad reads them:

=========================================  ========  ==========================
update                                     combiner  identity
=========================================  ========  ==========================
``X[e] = X[e] + v`` (or ``v + X[e]``)      ``+``     0
``X[e] = X[e] * v``                        ``*``     1
``X[e] = T.max(X[e], v)``                  ``max``   -inf; the dtype's minimum
``X[e] = T.min(X[e], v)``                  ``min``   +inf; the dtype's maximum
``X[e] = X[e] & v`` (integers)             ``&``     all ones (-1, or the maximum)
``X[e] = X[e] | v``, ``X[e] ^ v``          ``|``     0
                                           ``^``
``T.if_then_else(v > X[e], v, X[e])``      ``max``   as ``T.max``
=========================================  ========  ==========================

The ``T.if_then_else`` form is read as ``max`` or ``min`` wherever it picks
the larger (or smaller) of ``X[e]`` and ``v`` by ``<``, ``<=``, ``>`` or
``>=`` in either order: on equal values both branches are the same, so it
*is* that combiner (for values that are not NaN, as ``T.max`` itself).
Rewrites rebuild an update in the form it was written
(:meth:`Update.value`), so a select stays a select.

*Exact* combiners give the same bits in any order: every combiner on
integers (``+`` and ``*`` wrap modulo ``2**n``, a commutative ring; ``min``,
``max`` and the bitwise ones are exact by nature).  A floating-point ``+`` or
``*`` rounds, so reordering its terms changes the last bits, and a float
``min``/``max`` keeps the first of two equal terms, so the sign of a zero
result (and where a NaN is met) depends on the order: only ``rfactor`` or
``reassociate=True`` accept that.

An *arg-reduction* (argmax, argmin) is a pair of stores, the index first::

    I[e] = T.if_then_else(v > M[e], j, I[e])     # the index of the winner so far
    M[e] = T.max(M[e], v)                        # the winner so far

(or ``T.if_then_else(M[e] >= v, I[e], j)``; ``<`` and ``T.min`` for argmin):
the index moves only when ``v`` strictly beats the value so far, so ``I``
ends at the *first* index of the best value, as numpy's ``argmax``.  With
``j`` increasing along the loops, the pairs ``(M, I)`` combine by ``max``
on the value and, on equal values, the smaller index -- an associative and
commutative operation, exact in any order (:func:`arg_update_of`).  TVM's
own spelling binds both new values by lets and stores them after, in either
order; :mod:`polypad.schedule.update_lets` reads it as these two stores.

>>> u = update_of(store)          # B[i] = T.max(B[i], A[i, k])
>>> u.combiner.name, u.operand    # ('max', A[i, k])
>>> u.combiner.identity("int8")   # IntImm(-128, 'int8')
"""

from __future__ import annotations

from dataclasses import dataclass

from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.views import root
from polypad.ir.visitor import walk

_BINARY: dict[type, str] = {n.Add: "+", n.Mul: "*", n.Min: "min", n.Max: "max"}
_BITWISE: dict[str, str] = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
_COMPARE: dict[type, bool] = {n.Gt: True, n.Ge: True, n.Lt: False, n.Le: False}  # a > b?

NAMES = ("+", "*", "max", "min", "&", "|", "^")


@dataclass(frozen=True)
class Combiner:
    """An associative and commutative operation with an identity: one of :data:`NAMES`."""

    name: str

    def identity(self, dtype: str) -> n.Expr:
        """The value ``x`` with ``combine(y, x) == y`` for every ``y`` of ``dtype``."""
        if dtypes.is_float(dtype):
            value = {"+": 0.0, "*": 1.0, "max": float("-inf"), "min": float("inf")}[self.name]
            return n.FloatImm(value, dtype)
        low, high = _int_range(dtype)
        value = {"+": 0, "*": 1, "max": low, "min": high, "|": 0, "^": 0,
                 "&": -1 if low < 0 else high}[self.name]
        return n.IntImm(value, dtype)

    def exact(self, dtype: str) -> bool:
        """Whether combining terms in another order changes no bit: integers only.
        A float ``min``/``max`` keeps the first of two equal terms, so the sign of a
        zero result depends on the order (``max(-0.0, 0.0)`` is ``-0.0``,
        ``max(0.0, -0.0)`` is ``0.0``), as does a NaN read as the first term."""
        return dtypes.is_int(dtype)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class Update:
    """A reduction update ``store`` (see the module docstring): ``X[e]`` folded with
    ``operand`` by ``combiner``.  ``accumulators`` are the loads of ``X[e]`` in the
    value (one, or two in the ``T.if_then_else`` form)."""

    store: n.BufferStore
    combiner: Combiner
    operand: n.Expr
    accumulators: tuple[n.BufferLoad, ...]

    @property
    def buffer(self) -> n.Buffer:
        return self.store.buffer

    def value(self, acc: n.Expr, other: n.Expr) -> n.Expr:
        """The update's value in the form it was written, with ``acc`` for ``X[e]``
        and ``other`` for the operand: ``acc + other``, ``T.max(acc, other)``..."""
        value = self.store.value

        def put(x: n.Expr) -> n.Expr:
            return acc if any(x is a for a in self.accumulators) else other

        match value:
            case n.Select(condition=cond):
                return n.Select(type(cond)(put(cond.a), put(cond.b)),
                                put(value.true_value), put(value.false_value), value.eager)
            case n.Call():
                return n.Call(value.op, (put(value.args[0]), put(value.args[1])), value.dtype)
        return type(value)(put(value.a), put(value.b))

    def __repr__(self) -> str:
        return f"Update({self.buffer.name} {self.combiner})"


def update_of(store: n.Stmt) -> Update | None:
    """``store`` as a reduction update, or ``None`` when it is not one.

    Only the value is looked at: whether guards, loop bounds or lets around
    the store read ``X`` is the caller's question (the model answers it:
    :func:`analyses.reductions.find_reductions`).
    """
    if not isinstance(store, n.BufferStore):
        return None
    value, buffer = store.value, store.buffer
    if value.dtype != buffer.dtype or dtypes.is_bool(buffer.dtype):
        return None
    acc = n.BufferLoad(buffer, store.indices)
    match value:
        case n.Add() | n.Mul() | n.Min() | n.Max():
            name, operands = _BINARY[type(value)], (value.a, value.b)
        case n.Call(op=op) if op in _BITWISE and dtypes.is_int(buffer.dtype):
            name, operands = _BITWISE[op], value.args
        case n.Select():
            return _select(store, acc)
        case _:
            return None
    mine = [x for x in operands if x == acc]
    others = [x for x in operands if x != acc]
    if len(mine) != 1 or len(others) != 1 or _reads(others[0], buffer):
        return None
    return Update(store, Combiner(name), others[0], (mine[0],))


@dataclass(frozen=True, eq=False)
class ArgUpdate:
    """An arg-reduction (see the module docstring): ``index_store`` writes ``index``
    into the index buffer where the operand of ``update`` strictly beats the value so
    far (``update.combiner``: ``max`` for an argmax, ``min`` for an argmin)."""

    index_store: n.BufferStore
    update: Update
    index: n.Expr

    @property
    def index_buffer(self) -> n.Buffer:
        return self.index_store.buffer

    def beats(self, a: n.Expr, b: n.Expr) -> n.Expr:
        """``a`` strictly better than ``b``: ``a > b`` for an argmax."""
        return n.Gt(a, b) if self.update.combiner.name == "max" else n.Lt(a, b)

    def __repr__(self) -> str:
        return f"ArgUpdate({self.index_buffer.name}, {self.update.buffer.name} " \
               f"{self.update.combiner})"


def arg_update_of(first: n.Stmt, second: n.Stmt) -> ArgUpdate | None:
    """``first`` then ``second`` as an arg-reduction, or ``None``.

    ``second`` is a ``max`` (or ``min``) update of ``M[e]`` by ``v``;
    ``first`` stores into another integer buffer at the same indices ``e``
    either its own value or an index expression that reads neither buffer,
    the index exactly where ``v`` strictly beats ``M[e]`` (``v > M[e]``, or
    ``M[e] < v``; the select may be written the other way round, ``M[e] >=
    v`` picking the old index).  A non-strict comparison (the *last* best
    index) is not one: its pairs do not combine with an identity.  Whether
    the index increases along the loops is the caller's question.
    """
    u = update_of(second)
    if (u is None or u.combiner.name not in ("max", "min")
            or not isinstance(first, n.BufferStore) or first.buffer is u.buffer
            or not dtypes.is_int(first.buffer.dtype) or first.indices != second.indices):
        return None
    value, own = first.value, n.BufferLoad(first.buffer, first.indices)
    if not isinstance(value, n.Select) or type(value.condition) not in _COMPARE:
        return None
    t, f = value.true_value, value.false_value
    if (t == own) == (f == own):
        return None
    index = f if t == own else t
    if _reads(index, first.buffer) or _reads(index, u.buffer) or \
            _reads(u.operand, first.buffer) or index.dtype != first.buffer.dtype:
        return None
    cond, acc = value.condition, n.BufferLoad(u.buffer, second.indices)
    if {cond.a == acc, cond.b == acc} != {True, False}:
        return None
    if (cond.b if cond.a == acc else cond.a) != u.operand:
        return None
    # Normalize to "v OP M": which comparison picks the index?
    v_first = cond.a == u.operand
    strict, larger = {n.Gt: (True, True), n.Ge: (False, True),
                      n.Lt: (True, False), n.Le: (False, False)}[type(cond)]
    if not v_first:
        larger = not larger
    if t == own:  # the index where the condition fails: negate it
        strict, larger = not strict, not larger
    if not strict or larger != (u.combiner.name == "max"):
        return None
    return ArgUpdate(first, u, index)


def _select(store: n.BufferStore, acc: n.BufferLoad) -> Update | None:
    """``T.if_then_else(a OP b, t, f)`` with ``{a, b} == {t, f} == {X[e], v}``, as
    ``max`` or ``min``."""
    value = store.value
    cond = value.condition
    if type(cond) not in _COMPARE:
        return None
    t, f = value.true_value, value.false_value
    if (t == acc) == (f == acc) or (cond.a == acc) == (cond.b == acc):
        return None
    operand = f if t == acc else t
    if operand != (cond.b if cond.a == acc else cond.a) or _reads(operand, store.buffer):
        return None
    # ``a > b`` picks ``t`` when a is the larger: max when t is a.
    picks_larger = _COMPARE[type(cond)] == (t == cond.a)
    loads = (cond.a if cond.a == acc else cond.b, t if t == acc else f)
    return Update(store, Combiner("max" if picks_larger else "min"), operand, loads)


def _reads(expr: n.Expr, buffer: n.Buffer) -> bool:
    # By memory: an operand that reads the target through a view reads the target.
    base = root(buffer)
    return any(isinstance(x, n.BufferLoad) and root(x.buffer) is base for x in walk(expr))


def _int_range(dtype: str) -> tuple[int, int]:
    bits = dtypes.bits(dtype)
    if dtype.startswith("uint"):
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
