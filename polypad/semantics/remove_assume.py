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
"""

from __future__ import annotations

from polypad.arguments import expect
from polypad.ir.intrinsics import is_call
from polypad.ir.nodes import Evaluate, PrimFunc
from polypad.ir.removal import StatementRemover
from polypad.ir.verify import checked_result
from polypad.ir.visitor import walk


def checkable(stmt: Evaluate) -> bool:
    """Whether the assumption ``stmt`` can be checked at run time (it has no ``T.undef()``)."""
    return not any(is_call(node, "undef") for node in walk(stmt.value))


class _RemoveAssume(StatementRemover):
    def __init__(self, keep_checkable: bool):
        super().__init__()
        self.keep_checkable = keep_checkable

    def visit_Evaluate(self, node: Evaluate) -> Evaluate | None:
        if not is_call(node.value, "assume"):
            return node
        return node if self.keep_checkable and checkable(node) else None


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
