"""``remove_assume``: delete every ``T.assume`` statement.

Before::

    for i in T.serial(16):
        T.assume(i < 14 or A[i] == 0.0)
        B[i] = A[i] * 2.0

After::

    for i in T.serial(16):
        B[i] = A[i] * 2.0

Why it is correct: an assumption is a fact for the analyses, never checked at
run time (RFC 0077, "New Lowering Transform - Remove T.assume"), so
``Evaluate(T.assume(c))`` computes nothing and writes nothing.  A loop, ``if``
or let whose body held only assumptions has nothing left to do and goes too
(see :mod:`polypad.transform._removal`).  Lowering runs this pass before
:func:`polypad.transform.remove_store_undef`, which then finds no
``T.undef()`` left inside an assumption.
"""

from __future__ import annotations

from polypad.ir.intrinsics import is_call
from polypad.ir.nodes import Evaluate, PrimFunc

from ._removal import StatementRemover


class _RemoveAssume(StatementRemover):
    def visit_Evaluate(self, node: Evaluate) -> Evaluate | None:
        return None if is_call(node.value, "assume") else node


def remove_assume(func: PrimFunc) -> PrimFunc:
    """``func`` without its ``T.assume`` statements (the same object if it had none)."""
    return _RemoveAssume().visit(func)
