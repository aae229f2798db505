"""The loop rewrite behind ``Schedule.split``: one loop into a nest of loops.

A pure function ``PrimFunc -> PrimFunc``; the legality question that only
``tail="pad"`` raises is :mod:`.legality`'s.

``split(func, loop, [None, 8], tail)`` replaces ``for i in T.serial(m, m + e)``
by loops ``i_0, i_1`` over the resolved factors and puts ``i_0 * 8 + i_1 + m``
for ``i`` in the body.  Where the factors multiply to more than ``e`` the
extra iterations are handled by ``tail``:

* ``"predicate"``: a guard ``if i_0 * 8 + i_1 < e`` around the body (below
  the loops perfectly nested in it), as TVM's block predicate;
* ``"partition"``: a main nest whose outermost loop covers only whole tiles,
  with no guard, followed by tail nests for the remainder (for three or more
  factors, one tail nest per level), each without a guard either.  Tail
  loops are named ``<new loop>_tail``.  A symbolic extent ``e`` that isl
  does not prove ``>= 0`` gives the tail ``T.max(e, 0) % 8`` iterations,
  none where the loop runs none.  A reduction's init that never runs in
  a nest (a ``T.init()``, or the ``if k == 0:`` that ``reorder`` sinks: a
  tail's reduce axis starts past its first value, so the init ran in the main
  nest), and likewise a sunk write-back, is left out of that nest: isl decides
  it over the nest's loops (:func:`_without_dead_guards`); one that may run
  stays.

No sum the split writes wraps where the loop did not: ``(e + 7) // 8`` and the
guard ``i_0 * 8 + i_1 < e`` are written only where isl proves ``e + 7`` fits
the dtype (:func:`sums_fit`); elsewhere the quotient is ``e // 8 + (e % 8 + 7)
// 8`` (:func:`ceil_div`) and the guard ``i_1 < e - i_0 * 8``, exact for every
``e`` of the dtype.  The partition's forms never wrap: ``e // 8``, and offsets
below ``e`` in the tails.

The ``"pad"`` strategy is the predicate form with the guard removed
(:func:`without_guard`); the primitive builds it from :func:`split`'s guard
once the prover allows it (:func:`.split_pad_legality.check_split_pad`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

from polypad.errors import ArgumentValueError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.block_header import layout
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.locate import ancestors, replace
from polypad.ir.naming import fresh_name, var_names
from polypad.ir.ranges import dtype_range
from polypad.ir.removal import no_op
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import walk
from polypad.script.derive_header import widened_axis
from polypad.transform.facts_at import facts_at

TAILS = ("predicate", "partition", "pad")


def split(func: n.PrimFunc, loop: n.For, factors, tail: str = "predicate"
          ) -> tuple[n.PrimFunc, list[n.For], n.IfThenElse | None]:
    """``func`` with ``loop`` split by ``factors``: (new function, the main nest's loops
    outermost first, the guard of the predicate form or ``None``).

    ``tail`` is "predicate" or "partition" ("pad" is built from the predicate
    form's guard).  The new loops are serial and start at 0.
    """
    if tail not in ("predicate", "partition"):
        raise PolypadError(f"split: tail must be 'predicate' or 'partition' here, not {tail!r}")
    if loop.kind is not n.ForKind.SERIAL:
        raise PolypadError(f"split: the loop over {loop.var.name} is {loop.kind.value}; "
                           "split it while it is serial, then set its kind")
    dtype = loop.var.dtype
    fits = functools.cache(lambda known: sums_fit(func, loop, known))
    resolved = resolve_factors(loop.extent, factors, loop.var.name, plain=fits)
    strides = _strides(resolved)
    taken = var_names(func)
    new_vars = [n.Var(fresh_name(taken, f"{loop.var.name}_{k}"), dtype)
                for k in range(len(resolved))]
    if tail == "predicate":
        nest, guard = _predicate(loop, resolved, strides, new_vars, fits(strides[0]))
        return replace(func, loop, nest), _chain(nest, len(new_vars)), guard
    nests = _partition(loop, resolved, strides, new_vars, taken, extent_never_negative(func, loop))
    # Each tail its own statements: the substitution keeps every statement that does not
    # read the loop's counter, which would then stand in the main nest and in each tail
    # (analyses find statements by identity; an init must be able to leave one copy alone).
    nests = nests[:1] + [fresh_copy(x) for x in nests[1:]]
    new = _splice(func, loop, nests)
    for nest in nests:
        new = _without_dead_guards(new, _ifs_beside(nest))
    top = next(x for x in walk(new.body) if isinstance(x, n.For) and x.var is new_vars[0])
    return new, _chain(top, len(new_vars)), None


def _ifs_beside(nest: n.Stmt) -> list[n.IfThenElse]:
    """Every ``if`` without ``else`` beside other statements under ``nest``: a
    ``T.init()``, or an init (a write-back) that ``reorder`` moved into a loop's first
    (last) iteration, under ``if k == 0:`` (``if k == 15:``)."""
    return [x for seq in walk(nest) if isinstance(seq, n.SeqStmt) for x in seq.stmts
            if isinstance(x, n.IfThenElse) and x.else_case is None]


def _without_dead_guards(func: n.PrimFunc, guards: list[n.IfThenElse]) -> n.PrimFunc:
    """``func`` without those of ``guards`` (``if``\\ s of ``func``, each beside other
    statements) that never run where they stand: isl proves the condition false over
    the loops of that nest -- a reduction's init in a partition's tail, which starts
    past the reduce axis's first value, or its write-back in the main nest, which
    ends before the last.  One that may run stays, and so does one that stands in two
    places (only in an input tree that shares statements, which ``verify`` refuses):
    isl is asked about one place.  A ``T.init()`` that goes leaves its block's header too."""
    for guard in guards:
        # Split's own nests share nothing (fresh_copy above), and verify refuses a tree
        # that shares statements; a schedule does not verify its input, though, so an
        # unverified hand-built tree may: what holds at one place is not enough then.
        if sum(x is guard for x in walk(func.body)) > 1:
            continue
        if facts_at(func, guard).decide(guard.condition) is not False:
            continue
        parent = ancestors(func, guard)[-2]
        if not isinstance(parent, n.SeqStmt):
            # Its neighbours went before it (every ``if`` of the sequence was dead):
            # it is its parent's whole body now.
            func = replace(func, guard, no_op())
            continue
        rest = tuple(x for x in parent.stmts if x is not guard)
        func = replace(func, parent, rest[0] if len(rest) == 1 else n.SeqStmt(rest))
    return func


def _splice(func: n.PrimFunc, old: n.Stmt, new: list[n.Stmt]) -> n.PrimFunc:
    """``func`` with ``old`` replaced by the statements ``new``, flattened into the
    sequence around ``old`` where there is one (a SeqStmt never holds a SeqStmt)."""
    if len(new) == 1:
        return replace(func, old, new[0])
    path = ancestors(func, old)
    parent = path[-2] if len(path) > 1 else None
    if isinstance(parent, n.SeqStmt):
        stmts = [x for s in parent.stmts for x in (new if s is old else [s])]
        return replace(func, parent, n.SeqStmt(tuple(stmts), span=parent.span))
    return replace(func, old, n.SeqStmt(tuple(new)))


def resolve_factors(extent: n.Expr, factors, name: str,
                    plain: Callable[[int], bool] = lambda known: False) -> list[n.Expr]:
    """``factors`` with ``None`` replaced by the rounded-up quotient of ``extent``.

    A constant extent takes any factors whose product covers it; a symbolic one
    needs ``None`` as the outermost factor (the strides must stay constants, or
    the index would not be affine).  Its quotient is ``(e + 7) // 8`` where
    ``plain(8)`` (``e + 7`` cannot wrap: :func:`sums_fit`), else the form
    :func:`ceil_div` writes, exact for every value of ``e``.
    """
    if not isinstance(factors, (list, tuple)) or len(factors) < 2:
        raise PolypadError(f"split: factors must be a list of two or more, not {factors!r}")
    for f in factors:
        if f is not None and (not isinstance(f, int) or isinstance(f, bool) or f < 1):
            raise PolypadError(f"split: a factor must be a positive int or None, not {f!r}")
    given = list(factors)
    unknown = [k for k, f in enumerate(factors) if f is None]
    if len(unknown) > 1:
        raise PolypadError("split: at most one factor may be None")
    known = 1
    for f in factors:
        known *= f if f is not None else 1
    dtype = extent.dtype
    if isinstance(extent, n.IntImm):
        e = extent.value
        if unknown:
            factors = list(factors)
            factors[unknown[0]] = -(-e // known)
        elif known < e:
            raise PolypadError(f"split: the factors {list(factors)} multiply to {known}, "
                               f"less than the extent {e} of the loop over {name}")
        _check_fits(factors, given, name, dtype)
        return [n.IntImm(f, dtype) for f in factors]
    if unknown != [0]:
        raise PolypadError(f"split: the loop over {name} has the symbolic extent "
                           f"{_text(extent)}; make the outermost factor None")
    _check_fits(factors, given, name, dtype)
    if plain(known):
        outer = n.FloorDiv(n.Add(extent, n.IntImm(known - 1, dtype)), n.IntImm(known, dtype))
    else:
        outer = ceil_div(extent, known)
    return [outer] + [n.IntImm(f, dtype) for f in factors[1:]]


def _check_fits(factors, given: list, name: str, dtype: str) -> None:
    """Refuse a factor, or the stride of a new loop (the product of the factors inside
    it), past ``dtype``'s range: the new counters keep the loop's dtype and its index
    ``i_0 * stride + i_1`` writes the stride as a constant of it (``200`` is no
    ``int8``).  Such a split of a loop over ``dtype`` has one outer iteration at most.
    ``factors`` are resolved where the extent is a constant; ``given`` as the caller
    wrote them, for the message."""
    _, hi = dtype_range(dtype)
    stride = 1
    for k in reversed(range(len(factors))):
        f = factors[k]
        if f is not None and f > hi:
            raise ArgumentValueError(
                f"split: the factor {f} of the loop over {name} is past the range of its "
                f"{dtype} counter (at most {hi}); the new loops' counters are {dtype} too, "
                f"so each factor must be at most {hi}")
        if stride > hi:
            raise ArgumentValueError(
                f"split: the factors {given} of the loop over {name} give new loop "
                f"{k} (0 the outermost) the stride {stride}, past the range of its {dtype} "
                f"counter (at most {hi}); the product of the factors inside each new loop "
                f"must be at most {hi}")
        stride *= f if f is not None else 1


def ceil_div(extent: n.Expr, known: int) -> n.Expr:
    """``extent`` divided by ``known`` and rounded up, without a wrap-around for any value
    of ``extent``'s dtype: ``e // 8 + (e % 8 + 7) // 8``.

    ``(e + 7) // 8`` wraps where ``e > 2**31 - 8`` (int32) and runs a negative count,
    while the loop it splits ran ``e`` iterations.  Here ``e // 8`` lies in the dtype's
    range, and ``(e % 8 + 7) // 8`` is 1 where ``8`` does not divide ``e``, else 0;
    where ``e % k + k - 1`` itself may leave the dtype (``k`` past half its range, 127
    for int8), that 0 or 1 is written ``T.min(e % k, 1)``;
    for a negative ``e`` the quotient is at most 0, so the split loop runs nothing,
    as the original did.
    """
    dtype = extent.dtype
    k = n.IntImm(known, dtype)
    if 2 * (known - 1) > dtype_range(dtype)[1]:
        # e % k + (k - 1) may pass the dtype (126 + 126 in int8 for k = 127) and wrap to
        # a negative count; e % k lies in [0, k), so min(e % k, 1) is the same 0 or 1.
        rest = n.Min(n.FloorMod(extent, k), n.IntImm(1, dtype))
        return n.Add(n.FloorDiv(extent, k), rest)
    rest = n.FloorDiv(n.Add(n.FloorMod(extent, k), n.IntImm(known - 1, dtype)), k)
    return n.Add(n.FloorDiv(extent, k), rest)


def sums_fit(func: n.PrimFunc, loop: n.For, known: int) -> bool:
    """Whether ``loop``'s extent ``e`` plus ``known - 1`` stays inside its dtype wherever the
    loop is reached (isl decides, counting the ``T.assume``\\ s before it).

    Then every sum a split by ``known`` writes in its plain form -- the quotient
    ``(e + known - 1) // known``, the guard's ``i_0 * known + i_1 < e``, whose left side
    reaches ``e + known - 2`` -- is the exact one.  A constant extent is decided by its
    value: the guard's left side reaches ``known * ceil(e / known) - 1``.
    """
    _, hi = dtype_range(loop.extent.dtype)
    if isinstance(loop.extent, n.IntImm):
        return -(-loop.extent.value // known) * known - 1 <= hi
    cond: n.Expr = n.Le(loop.extent, n.IntImm(hi - (known - 1), loop.extent.dtype))
    # Every variable holds a value of its dtype: an int64 extent of int32 ones
    # (``T.Cast("int64", n) * 16``, a fused loop's) is far from the end of int64.
    for var in free_vars(loop.extent):
        if dtypes.is_int(var.dtype) and var.dtype != loop.extent.dtype:
            low, high = dtype_range(var.dtype)
            cond = n.Or(n.Or(n.Lt(var, n.IntImm(low, var.dtype)),
                             n.Gt(var, n.IntImm(high, var.dtype))), cond)
    return facts_at(func, loop, assumptions=True).decide(cond) is True


def _strides(resolved: list[n.Expr]) -> list[int]:
    """The constant step of each new loop in the old index (the inner factors' product)."""
    strides, step = [], 1
    for f in reversed(resolved[1:]):
        strides.append(step)
        step *= f.value
    strides.append(step)
    return strides[::-1]


def _index(new_vars: list[n.Var], strides: list[int], base: n.Expr | None) -> n.Expr:
    """``i_0 * s_0 + i_1 * s_1 + ... + base``, as TVM prints a split index."""
    out = None
    for var, stride in zip(new_vars, strides, strict=True):
        term = var if stride == 1 else n.Mul(var, n.IntImm(stride, var.dtype))
        out = term if out is None else n.Add(out, term)
    if base is not None and not _is_zero(base):
        out = n.Add(out, base) if out is not None else base
    return out


def _predicate(loop, resolved, strides, new_vars, plain: bool):
    """The predicate form; ``plain``: the guard ``i_0 * 8 + i_1 < e`` cannot wrap
    (:func:`sums_fit`), else it is ``i_1 < e - i_0 * 8``, whose sides stay within
    ``[0, e]`` on every iteration (``i_0 * 8 < e`` wherever the outer loop runs)."""
    body = substitute(loop.body, {loop.var: _index(new_vars, strides, loop.min)})
    guard = None
    exact = (isinstance(loop.extent, n.IntImm)
             and resolved[0].value * strides[0] == loop.extent.value)
    if not exact:
        if plain:
            condition = n.Lt(_index(new_vars, strides, None), loop.extent)
        else:
            outer = _index(new_vars[:1], strides[:1], None)
            condition = n.Lt(_index(new_vars[1:], strides[1:], None), n.Sub(loop.extent, outer))
        body, guard = _guarded(body, condition)
    return _nest(new_vars, resolved, body, loop.span), guard


def _guarded(body: n.Stmt, condition: n.Expr) -> tuple[n.Stmt, n.IfThenElse]:
    """``body`` with ``if condition`` around the statements inside its chain of loops.

    The guard goes as deep as the loops are perfectly nested (through blocks
    that hold just a loop), as TVM's block predicate does, so that a later
    ``reorder`` or ``fuse`` of those loops still finds a chain.  The
    condition does not use their counters.
    """
    if isinstance(body, n.For):
        inner, guard = _guarded(body.body, condition)
        return n.For(body.var, body.min, body.extent, body.kind, inner, span=body.span), guard
    if isinstance(body, n.Block) and isinstance(body.body, (n.For, n.Block)):
        inner, guard = _guarded(body.body, condition)
        return dataclasses.replace(body, body=inner), guard
    guard = n.IfThenElse(condition, body)
    return guard, guard


def extent_never_negative(func: n.PrimFunc, loop: n.For) -> bool:
    """Whether isl proves ``loop``'s extent ``>= 0`` wherever the loop is reached (its
    enclosing loops, branches and lets, and the ``T.assume``\\ s before it)."""
    if isinstance(loop.extent, n.IntImm):
        return loop.extent.value >= 0
    zero = n.IntImm(0, loop.extent.dtype)
    return facts_at(func, loop, assumptions=True).decide(n.Ge(loop.extent, zero)) is True


def _partition(loop, resolved, strides, new_vars, taken, never_negative) -> list[n.Stmt]:
    """The main nest (whole tiles of the outermost loop), then the tails, level by level.

    A negative extent runs nothing, but its floor remainder ``e % 8`` is positive
    (``-3 % 8 == 5``): unless ``never_negative`` (isl proved ``e >= 0``), the tails
    take their extents from ``T.max(e, 0)``, which is ``e`` wherever the loop runs
    and makes every tail empty where it does not.  The main nest needs no such care:
    its ``e // 8`` is negative there, so it runs nothing too."""
    dtype = loop.var.dtype
    tails = [n.Var(fresh_name(taken, f"{v.name}_tail"), dtype) for v in new_vars]
    nests: list[n.Stmt] = []
    base: n.Expr = n.IntImm(0, dtype)
    remaining: n.Expr = loop.extent
    for level in range(len(new_vars)):
        whole = _fold(n.FloorDiv, remaining, strides[level])
        if level == 0 and not never_negative:
            remaining = n.Max(remaining, n.IntImm(0, dtype))
        names = new_vars if level == 0 else tails
        # The main nest is kept even when empty, so that the names split returns exist.
        if level == 0 or not _is_zero(whole):
            inner = names[level:]
            at = _fold_add(base, loop.min)
            body = substitute(loop.body, {loop.var: _index(inner, strides[level:], at)})
            extents = [whole] + resolved[level + 1:]
            nests.append(_nest(inner, extents, body, loop.span if level == 0 else None))
        base = _fold_add(base, _fold(n.Mul, whole, strides[level]))
        remaining = _fold(n.FloorMod, remaining, strides[level])
        if _is_zero(remaining):
            break
    return nests


def _nest(new_vars, extents, body, span) -> n.Stmt:
    for var, extent in reversed(list(zip(new_vars, extents, strict=True))):
        body = n.For(var, n.IntImm(0, var.dtype), extent, n.ForKind.SERIAL, body)
    if span is not None:
        body = n.For(body.var, body.min, body.extent, body.kind, body.body, span=span)
    return body


def _chain(top: n.Stmt, count: int) -> list[n.For]:
    out = [top]
    while len(out) < count:
        out.append(out[-1].body)
    return out


def _fold(op, a: n.Expr, b: int) -> n.Expr:
    """``op(a, b)`` computed when ``a`` is a constant."""
    if b == 1:
        return n.IntImm(0, a.dtype) if op is n.FloorMod else a
    if isinstance(a, n.IntImm):
        value = {n.FloorDiv: a.value // b, n.FloorMod: a.value % b, n.Mul: a.value * b}[op]
        return n.IntImm(value, a.dtype)
    return op(a, n.IntImm(b, a.dtype))


def _fold_add(a: n.Expr, b: n.Expr) -> n.Expr:
    if isinstance(a, n.IntImm) and isinstance(b, n.IntImm):
        return n.IntImm(a.value + b.value, a.dtype)
    if _is_zero(a):
        return b
    if _is_zero(b):
        return a
    return n.Add(a, b)


def _is_zero(e: n.Expr) -> bool:
    return isinstance(e, n.IntImm) and e.value == 0


def _text(e: n.Expr) -> str:
    from polypad.ir.show import show

    return show(e)


def without_guard(guarded: n.PrimFunc, guard: n.IfThenElse, nest: list[n.For]) -> n.PrimFunc:
    """The ``"pad"`` form: ``guarded`` (the predicate form) with ``guard`` replaced by its
    body, so the extra iterations run.

    A block under the guard then runs where ``guard`` was false too, and a binding
    over the split loop (``vi = i_0 * 4 + i_1`` for ``vi = T.axis.spatial(14, i)``)
    reaches past its axis's domain there: each such axis gets a domain holding
    every value its binding takes over the loops (``T.axis.spatial(16, ...)``), as
    padding a block widens its iteration domain in TVM.  ``nest`` is the split's
    main nest, whose counters the affected bindings use.
    """
    padded = replace(guarded, guard, guard.then_case)
    counters = {id(x.var) for x in nest}
    for block in [x for x in walk(guard.then_case) if isinstance(x, n.Block)]:
        if block.header is None or not block.header.axes:
            continue
        loops = {x.var: (x.min, x.extent) for x in ancestors(padded, block)
                 if isinstance(x, n.For)}
        lets = layout(block.body, block.header).lets
        axes = tuple(widened_axis(axis, let.value, loops) if any(
                         id(v) in counters for v in walk(let.value)) else axis
                     for axis, let in zip(block.header.axes, lets, strict=True))
        if any(a is not b for a, b in zip(axes, block.header.axes, strict=True)):
            header = dataclasses.replace(block.header, axes=axes)
            padded = replace(padded, block, dataclasses.replace(block, header=header))
    return padded
