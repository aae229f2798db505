"""``hoist_expression``: move loop-invariant conditions and let bindings out of loops.

RFC 0077, "New Transform - Hoist Expression".  Before (with
``HoistedConditionals.BOOLEAN_EXPRESSION``)::

    for i, j in T.grid(4, 4):
        if i == 0 and j < 2:
            A[i, j] = 0.0

After::

    for i in T.serial(4):
        if i == 0:
            for j in T.serial(4):
                if j < 2:
                    A[i, j] = 0.0

A condition ``c`` that has the same value on every iteration of a loop is
hoisted by *unswitching*: the loop becomes ``if c: L[c := True] else:
L[c := False]``, each copy folded (``True and x`` is ``x``, an ``if False``
without else disappears, an empty loop disappears).  Inside each copy the
hoisted condition is a known fact, so a later condition it decides (``io == 2``
under ``io == 0``) is replaced by its value instead of hoisted again (ISL
decides it).  Loops are processed innermost first, so a condition climbs out of
every loop it does not depend on.  Let bindings whose value is invariant move
to just outside the loop.

Why it is correct: a condition is hoisted only when nothing it reads can
change during the loop -- no variable it uses is the loop counter or bound
inside the loop (a let bound inside the loop is hoisted first when its own
value is invariant; this is the ``HoistIfThenElse`` bug the RFC shows, where
``is_in_bounds = i < 3`` was treated as invariant), and no buffer it reads is
written or allocated inside the loop.  Its value at the loop entry is then
its value wherever it is evaluated in the loop.  Evaluating it once before
the loop is harmless for pure, total expressions; an expression that can fail
(a buffer load, a division by a variable) is hoisted only when it is the
whole condition of an ``if`` that runs on every iteration of a loop with a
positive constant extent, before any assert in it, so it was going to be
evaluated anyway (an assert before it is a fact for it: ``assert n < 8``
guards ``A[n]``, and the loop's first iteration fails it before loading).  A loop
whose body holds a block is not unswitched when both copies survive, since
that would duplicate the block's name.
"""

from __future__ import annotations

import dataclasses
import enum
from collections import Counter
from collections.abc import Iterator

from polypad.arguments import expect
from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.locate import replace
from polypad.ir.naming import Names
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import Rewriter, walk
from polypad.model import AffineSpace, to_set
from polypad.model.overflow import wraps_somewhere

from ._budget import budgeted_pass
from ._fold import FALSE, TRUE, build_if, fold, replace_exprs, substitute_and_fold


class HoistedConditionals(enum.Flag):
    """Which conditions to hoist (RFC 0077 ``HoistedConditionals``)."""

    NONE = 0
    #: the whole condition of an ``if`` statement
    IF_ELSE_STMT = 1 << 0
    #: the condition of a ``T.if_then_else`` expression
    IF_ELSE_EXPR = 1 << 1
    #: any boolean sub-expression (a conjunct, a comparison, a bool variable)
    BOOLEAN_EXPRESSION = 1 << 2
    ALL = IF_ELSE_STMT | IF_ELSE_EXPR | BOOLEAN_EXPRESSION


class HoistedLetBindings(enum.Flag):
    """Which let bindings to hoist (RFC 0077 ``HoistedLetBindings``)."""

    NONE = 0
    #: a let binding that a hoisted condition uses
    REQUIRED_BY_CONDITION = 1 << 0
    #: every invariant ``LetStmt``
    LET_STMT = 1 << 1
    #: every invariant ``Let`` expression (becomes a ``LetStmt`` outside the loop)
    LET_EXPR = 1 << 2
    ALL = REQUIRED_BY_CONDITION | LET_STMT | LET_EXPR


@budgeted_pass
def hoist_expression(
    func: n.PrimFunc,
    *,
    conditionals: HoistedConditionals = HoistedConditionals.ALL,
    let_bindings: HoistedLetBindings = HoistedLetBindings.ALL,
) -> n.PrimFunc:
    """``func`` with loop-invariant conditions and let bindings hoisted out of loops.

    >>> hoist_expression(f, conditionals=HoistedConditionals.IF_ELSE_STMT,
    ...                  let_bindings=HoistedLetBindings.NONE)
    """
    expect(conditionals, HoistedConditionals, "conditionals", "hoist_expression")
    expect(let_bindings, HoistedLetBindings, "let_bindings", "hoist_expression")
    body = _Hoister(conditionals, let_bindings).visit(func.body)
    if body is func.body:
        return func
    return dataclasses.replace(func, body=body)


# ---------------------------------------------------------------- loop facts


@dataclasses.dataclass
class _Scope:
    """What a loop's body binds, writes and evaluates on every iteration."""

    loop: n.For
    bindings: dict  # var -> the For / LetStmt / Let inside the body that binds it
    counts: Counter  # var -> how many times it is bound inside the body
    written: set  # buffers stored to or allocated inside the body
    unconditional: set  # ids of the LetStmt / IfThenElse nodes run on every iteration,
    #                     before any assert in it
    has_block: bool

    @property
    def positive(self) -> bool:
        return isinstance(self.loop.extent, n.IntImm) and self.loop.extent.value > 0


def _scope(loop: n.For) -> _Scope:
    scope = _Scope(loop, {}, Counter(), set(), set(), False)
    for node in walk(loop.body):
        if isinstance(node, (n.For, n.LetStmt, n.Let)):
            scope.bindings[node.var] = node
            scope.counts[node.var] += 1
        elif isinstance(node, n.BufferStore):
            scope.written.add(node.buffer)
        elif isinstance(node, n.Allocate):
            scope.written.add(node.buffer)
        elif isinstance(node, n.Block):
            scope.has_block = True
    stack = [loop.body]
    while stack:
        s = stack.pop()
        if isinstance(s, n.SeqStmt):
            stack.extend(s.stmts)
        elif isinstance(s, (n.Block, n.Allocate)):
            stack.append(s.body)
        elif isinstance(s, n.LetStmt):
            scope.unconditional.add(id(s))
            stack.append(s.body)
        elif isinstance(s, n.IfThenElse):
            scope.unconditional.add(id(s))
    # An assert is a fact for what follows it (a load's bounds): what an iteration
    # evaluates only after one may not be evaluated before the loop, where it has not run.
    order = {id(x): k for k, x in enumerate(walk(loop.body))}
    first_assert = min((order[id(x)] for x in walk(loop.body) if isinstance(x, n.Assert)),
                       default=None)
    if first_assert is not None:
        scope.unconditional = {k for k in scope.unconditional if order[k] < first_assert}
    return scope


def _hazardous(e: n.Expr) -> bool:
    """Whether evaluating ``e`` where it was not evaluated before could fail."""
    for x in walk(e):
        if isinstance(x, n.BufferLoad):
            return True
        if isinstance(x, (n.FloorDiv, n.FloorMod)) and not isinstance(x.b, n.IntImm):
            return True
    return False


def _reads_written(e: n.Expr, scope: _Scope) -> bool:
    return any(isinstance(x, n.BufferLoad) and x.buffer in scope.written for x in walk(e))


def _has_undef(e: n.Expr) -> bool:
    # undef is a fresh arbitrary value at each evaluation; hoisting would share one.
    return any(isinstance(x, n.Call) and x.op == "undef" for x in walk(e))


# ---------------------------------------------------------------- the pass


class _Hoister(Rewriter):
    def __init__(self, conditionals: HoistedConditionals, lets: HoistedLetBindings) -> None:
        self.conditionals = conditionals
        self.lets = lets
        self.names = Names()

    # Only statements hold loops; expressions are left alone.
    def visit_Expr(self, node: n.Expr) -> n.Expr:
        return node

    def visit_For(self, node: n.For) -> n.Stmt:
        body = self.visit(node.body)
        loop = node if body is node.body else dataclasses.replace(node, body=body)
        out = self.hoist(loop, ())
        # Hoisting never empties a loop that did something: both copies of an
        # unswitched loop cannot fold away, since the condition is True or False.
        return loop if out is None else out

    # ------------------------------------------------------------ one loop

    def hoist(self, loop: n.For, facts: tuple[n.Expr, ...]) -> n.Stmt | None:
        """``loop`` with its invariant lets and conditions moved out (``None``: empty)."""
        hoisted: list[tuple[n.Var, n.Expr]] = []
        if self.lets & (HoistedLetBindings.LET_STMT | HoistedLetBindings.LET_EXPR):
            loop = self.hoist_free_lets(loop, hoisted)
        while True:
            scope = _scope(loop)
            for cand, holder in self.candidates(loop.body):
                known = self.known(cand, facts)
                if known is not None:
                    loop = fold(replace_exprs(loop, {cand: known}))
                    break  # the body changed: look again
                needed = self.requirements(cand, holder, scope)
                if needed is None:
                    continue
                lets: list[tuple[n.Var, n.Expr]] = []
                moved = self.move_lets(loop, needed, lets)
                then = substitute_and_fold(moved, {cand: TRUE})
                other = substitute_and_fold(moved, {cand: FALSE})
                if scope.has_block and then is not None and other is not None:
                    continue
                if then is not None and other is not None:
                    # What the condition did not change is one object in both copies:
                    # analyses find statements by identity, so each copy gets its own.
                    other = fresh_copy(other)
                hoisted.extend(lets)
                then = None if then is None else self.hoist(then, (*facts, cand))
                other = None if other is None else self.hoist(other, (*facts, n.Not(cand)))
                return _wrap(hoisted, build_if(cand, then, other, span=loop.span))
            else:
                return _wrap(hoisted, loop)
            if loop is None:
                return _wrap(hoisted, None)

    def candidates(self, body: n.Stmt) -> Iterator[tuple[n.Expr, n.IfThenElse | None]]:
        """Conditions to try, outermost and first first, with the ``if`` they decide."""
        boolean = HoistedConditionals.BOOLEAN_EXPRESSION in self.conditionals
        for stmt in walk(body):
            if not isinstance(stmt, n.Stmt):
                continue
            if isinstance(stmt, n.Evaluate) and isinstance(stmt.value, n.Call) \
                    and stmt.value.op == "assume":
                continue
            whole = stmt.condition if isinstance(stmt, n.IfThenElse) else None
            if whole is not None and (boolean or HoistedConditionals.IF_ELSE_STMT
                                      in self.conditionals):
                yield whole, stmt
            for e in _own_exprs(stmt):
                for sub in walk(e):
                    if sub is whole:
                        continue
                    if isinstance(sub, n.Select) and (
                            HoistedConditionals.IF_ELSE_EXPR in self.conditionals):
                        yield sub.condition, None
                    if boolean and _is_condition(sub):
                        yield sub, None

    def known(self, cand: n.Expr, facts: tuple[n.Expr, ...]) -> n.Expr | None:
        """``True``/``False`` when the hoisted ``facts`` decide ``cand`` (by ISL)."""
        if not facts:
            return None
        space = AffineSpace((), names=self.names)
        try:
            target = to_set(cand, space)
        except NotAffineError:
            return None
        if any(wraps_somewhere(e, space, space.universe) for e in (cand, *facts)):
            return None  # ISL's integers do not wrap around; leave it to execution
        known = None
        for fact in facts:
            try:
                s = to_set(fact, space)
            except NotAffineError:
                continue
            known = s if known is None else known.intersect(s)
        if known is None:
            return None
        if known.is_subset(target):
            return TRUE
        if known.intersect(target).is_empty():
            return FALSE
        return None

    def requirements(self, cand: n.Expr, holder, scope: _Scope) -> list | None:
        """The let bindings to hoist with ``cand``, or ``None`` if it may not be hoisted."""
        if not self.evaluable(cand, holder, scope):
            return None
        needed: list = []

        def available(var: n.Var) -> bool:
            if var is scope.loop.var:
                return False
            binding = scope.bindings.get(var)
            if binding is None:
                return True  # bound outside the loop
            if not isinstance(binding, (n.LetStmt, n.Let)) or scope.counts[var] != 1:
                return False
            if HoistedLetBindings.REQUIRED_BY_CONDITION not in self.lets:
                return False
            if any(b is binding for b in needed):
                return True
            if not self.evaluable(binding.value, binding, scope):
                return False
            if not all(available(v) for v in free_vars(binding.value)):
                return False
            needed.append(binding)
            return True

        return needed if all(available(v) for v in free_vars(cand)) else None

    def evaluable(self, e: n.Expr, holder, scope: _Scope) -> bool:
        """Whether ``e`` may be evaluated once before the loop instead of inside it."""
        if _reads_written(e, scope) or _has_undef(e):
            return False
        if not _hazardous(e):
            return True
        return holder is not None and id(holder) in scope.unconditional and scope.positive

    # ------------------------------------------------------------ let bindings

    def hoist_free_lets(self, loop: n.For, hoisted: list) -> n.For:
        """Move every invariant let binding the flags allow out of ``loop``."""
        kinds = ()
        if HoistedLetBindings.LET_STMT in self.lets:
            kinds += (n.LetStmt,)
        if HoistedLetBindings.LET_EXPR in self.lets:
            kinds += (n.Let,)
        while True:
            scope = _scope(loop)
            for var, binding in scope.bindings.items():
                if not isinstance(binding, kinds) or scope.counts[var] != 1:
                    continue
                if any(v is loop.var or v in scope.bindings for v in free_vars(binding.value)):
                    continue
                if self.evaluable(binding.value, binding, scope):
                    loop = self.move_lets(loop, [binding], hoisted)
                    break
            else:
                return loop

    @staticmethod
    def move_lets(loop: n.For, bindings: list, hoisted: list) -> n.For:
        """``loop`` without ``bindings`` (their bodies stay); they are added to ``hoisted``."""
        for binding in bindings:
            loop = replace(loop, binding, binding.body)
            hoisted.append((binding.var, binding.value))
        return loop


def _own_exprs(stmt: n.Stmt) -> tuple[n.Expr, ...]:
    """The expressions directly held by ``stmt`` (not those of nested statements)."""
    match stmt:
        case n.IfThenElse():
            return (stmt.condition,)
        case n.BufferStore():
            return (stmt.value, *stmt.indices)
        case n.LetStmt():
            return (stmt.value,)
        case n.For():
            return (stmt.min, stmt.extent)
        case n.Evaluate():
            return (stmt.value,)
    return ()


def _is_condition(e: n.Expr) -> bool:
    if isinstance(e, (n.BoolImm, n.Call)):
        return False
    return e.dtype == "bool"


def _wrap(lets: list[tuple[n.Var, n.Expr]], stmt: n.Stmt | None) -> n.Stmt | None:
    if stmt is None:
        return None
    for var, value in reversed(lets):
        stmt = n.LetStmt(var, value, stmt)
    return stmt
