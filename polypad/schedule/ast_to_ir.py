"""An ISL AST (``isl.AstNode``) as polypad IR.

``isl.AstBuild`` turns a schedule into loops; this module reads the result
through the AST's node and expression *types* — never through ISL's C
printer, whose ``/`` and ``%`` truncate toward zero.  The expression
operators map as follows (``a``, ``b`` integer expressions):

====================  ========================================================
ISL operator          IR
====================  ========================================================
add, sub, mul         ``a + b``, ``a - b``, ``a * b``
minus                 ``0 - a``
fdiv_q                ``a // b`` (floor division, any sign)
pdiv_q, div           ``a // b`` (ISL only emits them where floor is exact or
                      the dividend is non-negative)
pdiv_r, zdiv_r        ``a % b`` (``pdiv_r``: non-negative dividend; ``zdiv_r``
                      is only compared with zero, and ``a % b == 0`` agrees)
min, max              ``T.min`` / ``T.max``, folded left for more operands
and(_then), or(_else) ``and`` / ``or``
eq, le, lt, ge, gt    comparisons
select, cond          ``T.if_then_else(c, a, b)``
====================  ========================================================

A ``for`` node becomes a ``For`` from its init to its bound (``c <= U`` or
``c < U``; a step ``s > 1`` counts ``k`` with ``c = init + s * k``), an
``if`` an ``IfThenElse``, a ``block`` a ``SeqStmt`` and a ``user`` node
whatever :meth:`AstToIR.user` makes of the call.  Subclasses refine the
loop variables, bounds and conditions (:mod:`.reschedule_ast` normalises
them through ISL).

>>> node = isl.AstBuild.from_context(isl.Set("{ : }")).node_from_schedule_map(
...     isl.UnionMap("{ S[i] -> [floor(i / 4), i mod 4] : 0 <= i < 14 }"))
>>> AstToIR(user=lambda name, args: ...).stmt(node)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import islpy as isl

from polypad.errors import DTypeError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir import operators as op
from polypad.ir.stages import seq

_T = isl.ast_expr_op_type

# Binary operators with a direct IR counterpart.
_BINARY = {
    _T.add: op.add, _T.sub: op.sub, _T.mul: op.mul,
    _T.fdiv_q: op.floordiv, _T.pdiv_q: op.floordiv, _T.div: op.floordiv,
    _T.pdiv_r: op.floormod, _T.zdiv_r: op.floormod,
    _T.eq: op.eq, _T.le: op.le, _T.lt: op.lt, _T.ge: op.ge, _T.gt: op.gt,
}
_LOGICAL = {
    _T.and_: op.logical_and, _T.and_then: op.logical_and,
    _T.or_: op.logical_or, _T.or_else: op.logical_or,
}
_FOLDED = {_T.min: op.min_, _T.max: op.max_}


def ast_expr_to_ir(expr: isl.AstExpr, env: Mapping[str, n.Expr],
                   dtype: str = "int32") -> n.Expr:
    """The ISL AST expression ``expr`` as IR; ``env`` maps identifier names to IR.

    A constant takes the dtype of the integer operands it meets (the widest of
    them), so ``n - 1`` over an int64 ``n`` is ``n - T.int64(1)``; ``dtype`` is
    the dtype of constants that meet no variable (a loop's bound: its counter's).
    A constant that does not fit that dtype is written in int32 or int64, the
    other operands cast to it.  Raises :class:`PolypadError` for an identifier
    ``env`` lacks or an operator with no IR meaning (``access``, ``member``,
    ``call``...).
    """
    kind = expr.get_type()
    if kind == isl.ast_expr_type.int:
        return _constant(int(expr.get_val().to_python()), dtype)
    if kind == isl.ast_expr_type.id:
        name = expr.get_id().get_name()
        if name not in env:
            raise PolypadError(f"the ISL AST uses {name!r}, which has no IR variable")
        return env[name]
    if kind != isl.ast_expr_type.op:
        raise PolypadError(f"cannot convert the ISL AST expression of type {kind}")
    op_type = expr.get_op_type()
    operands = [expr.get_op_arg(k) for k in range(expr.get_op_n_arg())]
    args: list[n.Expr | None] = [
        None if a.get_type() == isl.ast_expr_type.int else ast_expr_to_ir(a, env, dtype)
        for a in operands]
    # The operands' integer dtype, for the constants among them.
    wide = None
    for arg in args:
        if arg is not None and dtypes.is_int(arg.dtype):
            wide = arg.dtype if wide is None else dtypes.wider(wide, arg.dtype)
    args = [ast_expr_to_ir(a, env, wide or dtype) if arg is None else arg
            for a, arg in zip(operands, args, strict=True)]
    if op_type in _BINARY and len(args) == 2:
        return _BINARY[op_type](*args)
    if op_type in _LOGICAL:
        return _LOGICAL[op_type](*args)
    if op_type in _FOLDED:
        out = args[0]
        for arg in args[1:]:
            out = _FOLDED[op_type](out, arg)
        return out
    if op_type == _T.minus and len(args) == 1:
        return op.sub(n.IntImm(0, args[0].dtype), args[0])
    if op_type in (_T.select, _T.cond) and len(args) == 3:
        return n.Select(args[0], *op.promote(args[1], args[2]))
    raise PolypadError(f"cannot convert the ISL AST operator {op_type} with {len(args)} operands")


def _constant(value: int, dtype: str) -> n.IntImm:
    """``value`` in ``dtype``, or in the narrowest of int32 and int64 that holds it."""
    for candidate in (dtype, "int32", "int64"):
        try:
            return n.IntImm(value, candidate)
        except DTypeError:
            continue
    raise PolypadError(f"the ISL AST constant {value} does not fit int64")


def user_call(node: isl.AstNode) -> tuple[str, list[isl.AstExpr]]:
    """The statement name and argument expressions of a ``user`` node's call."""
    call = node.user_get_expr()
    if call.get_type() != isl.ast_expr_type.op or call.get_op_type() != _T.call:
        raise PolypadError("an ISL user node does not hold a call")
    name = call.get_op_arg(0).get_id().get_name()
    return name, [call.get_op_arg(k) for k in range(1, call.get_op_n_arg())]


class AstToIR:
    """Converts ISL AST nodes to IR statements; see the module docstring.

    ``env`` maps parameter names to IR variables.  ``user(name, args)``
    builds the statement of a user node from its converted arguments
    (``None`` drops it).  Loops count in ``dtype`` unless :meth:`loop_var`
    says otherwise.  While converting, :attr:`loops` holds the
    enclosing loops as ``(iterator name, Var, min, extent)`` and
    :attr:`guards` the enclosing ``if`` conditions, for the hooks.
    """

    def __init__(self, env: Mapping[str, n.Expr] | None = None,
                 user: Callable[[str, list[n.Expr]], n.Stmt | None] | None = None,
                 dtype: str = "int32") -> None:
        self.env: dict[str, n.Expr] = dict(env or {})
        self._user = user
        self.dtype = dtype
        self.loops: list[tuple[str, n.Var, n.Expr, n.Expr]] = []
        self.guards: list[n.Expr] = []

    # ------------------------------------------------------------ hooks

    def loop_var(self, iterator: str, node: isl.AstNode) -> n.Var:
        """The IR variable of the loop ``node`` over ISL iterator ``iterator``."""
        return n.Var(iterator, self.dtype)

    def bounds(self, lo: n.Expr, hi: n.Expr) -> tuple[n.Expr, n.Expr]:
        """The ``(min, extent)`` of a loop from ``lo`` to ``hi`` inclusive."""
        if isinstance(lo, n.IntImm) and isinstance(hi, n.IntImm):
            return lo, _constant(hi.value - lo.value + 1, lo.dtype)
        if isinstance(lo, n.IntImm) and lo.value == 0:
            return lo, op.add(hi, 1)
        return lo, op.sub(op.add(hi, 1), lo)

    def loop_kind(self, iterator: str, node: isl.AstNode) -> n.ForKind:
        """The kind of the loop ``node``; serial unless a subclass knows better."""
        return n.ForKind.SERIAL

    def condition(self, cond: n.Expr) -> n.Expr:
        """The condition of an ``if`` node, as the IR will test it."""
        return cond

    def user(self, name: str, args: list[n.Expr], node: isl.AstNode) -> n.Stmt | None:
        """The statement for a call ``name(args...)`` of a user node."""
        if self._user is None:
            raise PolypadError(f"no statement was given for the ISL user node {name}")
        return self._user(name, args)

    # ------------------------------------------------------------ conversion

    def expr(self, e: isl.AstExpr, dtype: str = "int32") -> n.Expr:
        """``e`` as IR, with the enclosing loop variables in scope; constants that meet
        no variable are of ``dtype``."""
        return ast_expr_to_ir(e, self.env, dtype)

    def stmt(self, node: isl.AstNode) -> n.Stmt | None:
        """``node`` as an IR statement, or ``None`` when nothing is left of it."""
        kind = node.get_type()
        if kind == isl.ast_node_type.block:
            children = node.block_get_children()
            stmts = [self.stmt(children.get_at(k)) for k in range(children.n_ast_node())]
            kept = [s for s in stmts if s is not None]
            return seq(*kept) if kept else None
        if kind == isl.ast_node_type.for_:
            return self._for(node)
        if kind == isl.ast_node_type.if_:
            return self._if(node)
        if kind == isl.ast_node_type.user:
            name, args = user_call(node)
            return self.user(name, [self.expr(a, self.dtype) for a in args], node)
        if kind == isl.ast_node_type.mark:
            return self.stmt(node.mark_get_node())
        raise PolypadError(f"cannot convert the ISL AST node of type {kind}")

    def _for(self, node: isl.AstNode) -> n.Stmt | None:
        iterator = node.for_get_iterator().get_id().get_name()
        # The bounds are in the counter's dtype (a degenerate loop's value too).
        var = self.loop_var(iterator, node)
        lo = self.expr(node.for_get_init(), var.dtype)
        if node.for_is_degenerate():
            # A single iteration: the iterator is just a name for its value.
            return self._scoped(iterator, lo, lambda: self.stmt(node.for_get_body()))
        inc = node.for_get_inc()
        step = inc.get_val().to_python() if inc.get_type() == isl.ast_expr_type.int else 0
        if step < 1:
            raise PolypadError(f"an ISL for loop over {iterator} has a step that is not a "
                               "positive constant")
        hi = self._upper_bound(node.for_get_cond(), iterator, var.dtype)
        if step == 1:
            lo, extent = self.bounds(lo, hi)
            value = var
        else:
            # for (c = lo; c <= hi; c += s) counts k = 0 .. (hi - lo) // s with c = lo + s * k.
            start = lo
            lo, extent = self.bounds(n.IntImm(0, var.dtype),
                                     op.floordiv(op.sub(hi, start), step))
            value = op.add(start, op.mul(n.IntImm(step, var.dtype), var))
        # A bound narrower than its counter (a band widened past its statements'
        # dtype: counter_ranges.widened) is cast up, exactly, so that the loop reads
        # back with its counter's dtype.
        lo, extent = _widened(lo, var.dtype), _widened(extent, var.dtype)
        self.loops.append((iterator, var, lo, extent))
        try:
            body = self._scoped(iterator, value, lambda: self.stmt(node.for_get_body()))
        finally:
            self.loops.pop()
        if body is None:
            return None
        return n.For(var, lo, extent, self.loop_kind(iterator, node), body)

    def _upper_bound(self, cond: isl.AstExpr, iterator: str, dtype: str) -> n.Expr:
        """``U`` of the loop condition ``c <= U`` (or ``U - 1`` of ``c < U``)."""
        ok = cond.get_type() == isl.ast_expr_type.op and cond.get_op_n_arg() == 2
        kind = cond.get_op_type() if ok else None
        if kind in (_T.le, _T.lt):
            first = cond.get_op_arg(0)
            if (first.get_type() == isl.ast_expr_type.id
                    and first.get_id().get_name() == iterator):
                bound = self.expr(cond.get_op_arg(1), dtype)
                if kind == _T.le:
                    return bound
                if isinstance(bound, n.IntImm):
                    return _constant(bound.value - 1, bound.dtype)
                return op.sub(bound, 1)
        raise PolypadError(f"an ISL for loop over {iterator} has an unexpected condition")

    def _if(self, node: isl.AstNode) -> n.Stmt | None:
        raw = self.expr(node.if_get_cond())
        cond = self.condition(raw)
        self.guards.append(raw)
        try:
            then = self.stmt(node.if_get_then_node())
        finally:
            self.guards.pop()
        other = None
        if node.if_has_else_node():
            self.guards.append(op.negate(raw))
            try:
                other = self.stmt(node.if_get_else_node())
            finally:
                self.guards.pop()
        if isinstance(cond, n.BoolImm):
            return then if cond.value else other
        if then is None and other is None:
            return None
        if then is None:
            return n.IfThenElse(op.negate(cond), other)
        return n.IfThenElse(cond, then, other)

    def _scoped(self, name: str, value: n.Expr, run):
        saved = self.env.get(name)
        self.env[name] = value
        try:
            return run()
        finally:
            if saved is None:
                del self.env[name]
            else:
                self.env[name] = saved


def _widened(e: n.Expr, dtype: str) -> n.Expr:
    """``e`` in ``dtype`` where that is a wider integer dtype that holds all its values."""
    if not (dtypes.is_int(e.dtype) and dtypes.is_int(dtype) and e.dtype != dtype
            and dtypes.bits(e.dtype) < dtypes.bits(dtype)
            and (dtype.startswith("int") or e.dtype.startswith("uint"))):
        return e
    if isinstance(e, n.IntImm):
        return _constant(e.value, dtype)
    if (isinstance(e, n.Cast) and dtypes.is_int(e.value.dtype)
            and dtypes.bits(e.value.dtype) >= dtypes.bits(dtype)):
        # An exact cast down from a wider form (exact_bounds): its value fits the
        # narrow dtype, so the wider one too.
        return n.Cast(dtype, e.value)
    return n.Cast(dtype, e)


def ast_to_ir(node: isl.AstNode, user: Callable[[str, list[n.Expr]], n.Stmt | None],
              env: Mapping[str, n.Expr] | None = None) -> n.Stmt | None:
    """``node`` as IR: loops, ifs and sequences, with ``user(name, args)`` for statements."""
    return AstToIR(env, user).stmt(node)
