"""``remove_assume``: delete every ``T.assume`` statement.

Before::

    for i in T.serial(16):
        T.assume(i < 14 or A[i] == 0.0)
        B[i] = A[i] * 2.0

After::

    for i in T.serial(16):
        B[i] = A[i] * 2.0

Why it is correct: an assumption is a fact for the analyses, never needed at
run time (RFC 0077, "New Lowering Transform - Remove T.assume"), so
``Evaluate(T.assume(c))`` computes nothing and writes nothing.  A loop, ``if``
or let whose body held only assumptions has nothing left to do and goes too
(see :mod:`polypad.ir.removal`).  Lowering runs this pass before
:func:`.remove_store_undef`, which then finds no
``T.undef()`` left inside an assumption.

:func:`remove_uncheckable_assume` is the variant that lowering runs instead
when assumptions are to be checked at run time (``codegen.build(f,
check_assumptions=True)`` and the reference executor): it deletes only the
assumptions that mention ``T.undef()``.  Those cannot be checked -- "``A[i]``
is some valid value" holds of every value -- and only grant permission, so
dropping them loses no check.  Every other assumption stays where it is.

:func:`remove_assume_keeping_facts` is the variant for a target whose analyses
run on the lowered function (the ``cuda`` target plans its barriers there,
:meth:`codegen.target.Target.lowered`): it deletes every
assumption except those :mod:`polypad.model.parameter_facts` reads, the
top-level ones (no loop or ``if`` around them), which it cuts to their
conjuncts over the integer parameters.  Those stay, in place, as facts for the
model's wrap-around checks; the target executes them as nothing, as if they
had been removed.  Cutting loses nothing the model would use: it reads only
such conjuncts, in order, each where the ones before it hold.
"""

from __future__ import annotations

from polypad.arguments import expect
from polypad.ir import nodes as ir
from polypad.ir.intrinsics import is_call
from polypad.ir.nodes import Evaluate, PrimFunc
from polypad.ir.removal import StatementRemover
from polypad.ir.verify import checked_result
from polypad.ir.visitor import walk
from polypad.model.parameter_facts import function_parameters, parameter_part


def checkable(stmt: Evaluate) -> bool:
    """Whether the assumption ``stmt`` can be checked at run time (it has no ``T.undef()``)."""
    return not any(is_call(node, "undef") for node in walk(stmt.value))


class _RemoveAssume(StatementRemover):
    def __init__(self, keep_checkable: bool, facts_over: tuple[ir.Var, ...] | None = None):
        super().__init__()
        self.keep_checkable = keep_checkable
        # Keeping the top-level facts over these parameters (None: keeping none).
        self.facts_over = facts_over
        self.nested = 0  # loops and ifs around the statement visited

    def visit_Evaluate(self, node: Evaluate) -> Evaluate | None:
        if not is_call(node.value, "assume"):
            return node
        if self.facts_over is not None and not self.nested and len(node.value.args) == 1:
            fact = parameter_part(node.value.args[0], self.facts_over)
            if fact is None:
                return None
            return node if fact is node.value.args[0] else Evaluate(
                ir.Call("assume", (fact,), node.value.dtype), span=node.span)
        return node if self.keep_checkable and checkable(node) else None

    def _nested(self, node: ir.For | ir.IfThenElse):
        self.nested += 1
        try:
            visit = (StatementRemover.visit_For if isinstance(node, ir.For)
                     else StatementRemover.visit_IfThenElse)
            return visit(self, node)
        finally:
            self.nested -= 1

    visit_For = visit_IfThenElse = _nested


def remove_assume(func: PrimFunc) -> PrimFunc:
    """``func`` without its ``T.assume`` statements (the same object if it had none)."""
    expect(func, PrimFunc, "func", "remove_assume")
    return checked_result(_RemoveAssume(keep_checkable=False).visit(func), func, "remove_assume")


def remove_uncheckable_assume(func: PrimFunc) -> PrimFunc:
    """``func`` without the ``T.assume`` statements that mention ``T.undef()``.

    The others stay, for the targets to check at run time.
    """
    return checked_result(_RemoveAssume(keep_checkable=True).visit(func), func,
                          "remove_uncheckable_assume")


def remove_assume_keeping_facts(func: PrimFunc) -> PrimFunc:
    """``func`` without its ``T.assume`` statements, except the top-level ones, cut to
    their conjuncts over the integer parameters (see the module docstring)."""
    expect(func, PrimFunc, "func", "remove_assume_keeping_facts")
    remover = _RemoveAssume(keep_checkable=False, facts_over=function_parameters(func))
    return checked_result(remover.visit(func), func, "remove_assume_keeping_facts")
