"""Replacing sub-expressions by constants, and folding what that decides.

Shared by the passes that learn a condition's value in some region
(:mod:`.hoist_expression` substitutes a hoisted condition by ``True`` or
``False`` in each copy of a loop; :mod:`.simplify` and
:mod:`.reduce_loop_extents` drop guards they proved).  Folding only uses
the boolean laws (``True and x`` is ``x``, ``if False`` runs its else
branch), so it is correct for any operand: IR expressions have no side
effects, and dropping the evaluation of one can only remove a failure.
An ``if``, loop, let or block left with nothing to do is removed, as in
:mod:`polypad.ir.removal`.

:func:`fold_constant` evaluates arithmetic on constants as it is executed:
integers wrap at their width like numpy's (``polypad.model.ranges.wrap``),
floats are computed in their own dtype (``np.float32``, never in float64).
A float result is folded only where no rounding happened: the prover reads a
literal as the real number its text denotes (``0.1`` is 1/10, see
:mod:`polypad.model.z3conv`), so a folded literal must be both the value
execution computes and the exact real result of the literals it replaces --
otherwise a later proof over the reals could decide a comparison that runs
the other way.  ``1.5 * 2.0 - 0.25`` folds to ``2.75``; ``0.1 + 0.2`` and
float32 ``16777216.0 + 1.0`` (which rounds to ``16777216.0``) stay.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.intrinsics import is_call
from polypad.ir.removal import StatementRemover
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter
from polypad.model.ranges import wrap

TRUE = n.BoolImm(True)
FALSE = n.BoolImm(False)


class _ExprReplacer(Rewriter):
    """Replaces every sub-expression equal (exactly) to a key; skips ``T.assume``."""

    def __init__(self, mapping: Mapping[n.Expr, n.Expr]) -> None:
        self.mapping = mapping

    def visit(self, node):
        if isinstance(node, n.Expr):
            found = self.mapping.get(node)
            if found is not None:
                return found
        return super().visit(node)

    def visit_Evaluate(self, node: n.Evaluate):
        # A fact stays as stated: rewriting it under a branch's knowledge would
        # weaken what later analyses may use, for no gain at run time.
        return node if is_call(node.value, "assume") else self.generic_visit(node)


def replace_exprs(node, mapping: Mapping[n.Expr, n.Expr]):
    """``node`` with each sub-expression equal to a key of ``mapping`` replaced."""
    if not mapping:
        return node
    return _ExprReplacer(mapping).visit(node)


def fold_expr(e: n.Expr) -> n.Expr:
    """``e`` with constant boolean structure folded (``x and True`` -> ``x``)."""
    return _ExprFolder().visit(e)


class _ExprFolder(Rewriter):
    def visit_And(self, node: n.And) -> n.Expr:
        a, b = self.visit(node.a), self.visit(node.b)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, n.BoolImm):
                return y if x.value else FALSE
        return node if (a is node.a and b is node.b) else n.And(a, b)

    def visit_Or(self, node: n.Or) -> n.Expr:
        a, b = self.visit(node.a), self.visit(node.b)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, n.BoolImm):
                return TRUE if x.value else y
        return node if (a is node.a and b is node.b) else n.Or(a, b)

    def visit_Not(self, node: n.Not) -> n.Expr:
        a = self.visit(node.a)
        if isinstance(a, n.BoolImm):
            return n.BoolImm(not a.value)
        if isinstance(a, n.Not):
            return a.a
        return node if a is node.a else n.Not(a)

    def visit_Select(self, node: n.Select) -> n.Expr:
        node = self.generic_visit(node)
        if isinstance(node.condition, n.BoolImm):
            return node.true_value if node.condition.value else node.false_value
        return node

    def visit_Call(self, node: n.Call) -> n.Expr:
        node = self.generic_visit(node)
        if node.op == "likely" and isinstance(node.args[0], n.BoolImm):
            return node.args[0]
        return node


class Folder(StatementRemover):
    """Folds conditions and removes what a constant condition leaves dead."""

    def visit_IfThenElse(self, node: n.IfThenElse) -> n.Stmt | None:
        cond = fold_expr(node.condition)
        if isinstance(cond, n.BoolImm):
            taken = node.then_case if cond.value else node.else_case
            return None if taken is None else self.visit(taken)
        out = super().visit_IfThenElse(node)
        if out is None or cond is node.condition:
            return out
        if isinstance(out, n.IfThenElse) and out.condition is node.condition:
            return n.IfThenElse(cond, out.then_case, out.else_case, span=node.span)
        # The remover negated the condition (only an else branch was left).
        return n.IfThenElse(n.Not(cond), out.then_case, out.else_case, span=node.span)

    def visit_BufferStore(self, node: n.BufferStore) -> n.Stmt:
        value = fold_expr(node.value)
        indices = tuple(fold_expr(i) for i in node.indices)
        if value is node.value and all(a is b for a, b in zip(indices, node.indices)):
            return node
        return n.BufferStore(node.buffer, value, indices, span=node.span)

    def visit_LetStmt(self, node: n.LetStmt) -> n.Stmt | None:
        value = fold_expr(node.value)
        if isinstance(value, n.BoolImm):
            # A decided boolean let: its uses fold too (`c = True; if c:` -> the body).
            return self.visit(substitute(node.body, {node.var: value}))
        body = self.visit(node.body)
        if body is None:
            return None
        if value is node.value and body is node.body:
            return node
        return n.LetStmt(node.var, value, body, span=node.span)


def fold(stmt: n.Stmt) -> n.Stmt | None:
    """``stmt`` with constant conditions folded; ``None`` when nothing is left."""
    return Folder().visit(stmt)


def substitute_and_fold(stmt: n.Stmt, mapping: Mapping[n.Expr, n.Expr]) -> n.Stmt | None:
    """:func:`replace_exprs` then :func:`fold`."""
    return fold(replace_exprs(stmt, mapping))


def build_if(cond: n.Expr, then: n.Stmt | None, other: n.Stmt | None, *,
             span: n.Span | None = None) -> n.Stmt | None:
    """``if cond: then else: other``, with empty branches left out."""
    if then is None and other is None:
        return None
    if then is None:
        return n.IfThenElse(n.Not(cond), other, None, span=span)
    return n.IfThenElse(cond, then, other, span=span)


# ---------------------------------------------------------------- constants

_INT_OPS = {n.Add: operator.add, n.Sub: operator.sub, n.Mul: operator.mul,
            n.FloorDiv: operator.floordiv, n.FloorMod: operator.mod, n.Min: min, n.Max: max}
_FLOAT_OPS = {n.Add: operator.add, n.Sub: operator.sub, n.Mul: operator.mul,
              n.Div: operator.truediv, n.Min: min, n.Max: max}
_COMPARE = {n.Eq: operator.eq, n.Ne: operator.ne, n.Lt: operator.lt, n.Le: operator.le,
            n.Gt: operator.gt, n.Ge: operator.ge}


def fold_constant(e: n.Expr) -> n.Expr:
    """``e`` with its top operation evaluated when its operands are constants, else ``e``.

    Only the top node is looked at (its operands are taken as already
    folded).  Integer identities that hold for every value, wrap-around
    included (``x + 0``, ``x - 0``, ``x * 1``, ``x // 1``), drop the constant.

    >>> fold_constant(n.Add(n.IntImm(-2), n.IntImm(9)))   # IntImm(7)
    """
    match e:
        case n.BinaryOp(a=n.IntImm() as a, b=n.IntImm() as b) if type(e) in _INT_OPS:
            if not (a.dtype == b.dtype and dtypes.is_int(a.dtype)):
                return e
            if isinstance(e, (n.FloorDiv, n.FloorMod)) and b.value == 0:
                return e  # 0 when executed, but a reader would not expect it to vanish
            return n.IntImm(wrap(_INT_OPS[type(e)](a.value, b.value), e.dtype), e.dtype)
        case n.BinaryOp(a=n.FloatImm() as a, b=n.FloatImm() as b) if type(e) in _FLOAT_OPS:
            return _fold_float(e, a, b)
        case n.Compare(a=n.IntImm() as a, b=n.IntImm() as b) if a.dtype == b.dtype:
            return n.BoolImm(_COMPARE[type(e)](a.value, b.value))
        case n.Compare(a=n.FloatImm() as a, b=n.FloatImm() as b) if a.dtype == b.dtype:
            return _compare_floats(e, a, b)
        case n.BinaryOp() if dtypes.is_int(e.dtype):
            return _int_identity(e)
    return e


def _int_identity(e: n.BinaryOp) -> n.Expr:
    def is_const(x: n.Expr, value: int) -> bool:
        return isinstance(x, n.IntImm) and x.value == value and x.dtype == e.dtype

    match e:
        case n.Add() if is_const(e.b, 0):
            return e.a
        case n.Add() if is_const(e.a, 0):
            return e.b
        case n.Sub() if is_const(e.b, 0):
            return e.a
        case n.Mul() if is_const(e.b, 1):
            return e.a
        case n.Mul() if is_const(e.a, 1):
            return e.b
        case n.FloorDiv() if is_const(e.b, 1):
            return e.a
    return e


def _executed(value: float, dtype: str):
    """``value`` as the numpy scalar of ``dtype`` that execution holds."""
    return np.dtype(dtypes.numpy_name(dtype)).type(value)


def _real(value: float) -> Fraction:
    """The real number a literal denotes for the prover (its shortest text)."""
    return Fraction(repr(float(value)))


def _fold_float(e: n.BinaryOp, a: n.FloatImm, b: n.FloatImm) -> n.Expr:
    if not (a.dtype == b.dtype == e.dtype and dtypes.is_float(e.dtype)):
        return e
    if not (math.isfinite(a.value) and math.isfinite(b.value)):
        return e
    op = _FLOAT_OPS[type(e)]
    if isinstance(e, n.Div) and b.value == 0:
        return e
    exact = op(_real(a.value), _real(b.value))
    with np.errstate(all="ignore"):
        executed = op(_executed(a.value, e.dtype), _executed(b.value, e.dtype))
    literal = float(_executed(executed, e.dtype))  # numpy may promote; a store converts back
    # Folded only when the dtype holds the exact result: then the literal is both what
    # execution computes and, for the prover, the real the operands denote.
    if not math.isfinite(literal) or Fraction(literal) != exact or _real(literal) != exact:
        return e
    return n.FloatImm(literal, e.dtype)


def _compare_floats(e: n.Compare, a: n.FloatImm, b: n.FloatImm) -> n.Expr:
    if not (math.isfinite(a.value) and math.isfinite(b.value)):
        return e
    op = _COMPARE[type(e)]
    real = op(_real(a.value), _real(b.value))
    executed = bool(op(_executed(a.value, a.dtype), _executed(b.value, b.dtype)))
    return n.BoolImm(real) if real == executed else e
