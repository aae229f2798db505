"""A copy of a statement tree made of new statement objects.

Deciders find statements by identity (``is_no_op(f, stmt)``), so asking a
question about a *second* copy of a statement needs nodes that are not the
first copy's.  Expressions, variables and buffers are shared: they are
values (variables and buffers are identities on purpose, and a copy binds
the same loop variables in its own, separate scope).
"""

from __future__ import annotations

import dataclasses

from .nodes import Stmt
from .visitor import Rewriter


class _Fresh(Rewriter):
    def visit_Stmt(self, node: Stmt) -> Stmt:
        new = self.generic_visit(node)
        return dataclasses.replace(node) if new is node else new


def fresh_copy(stmt: Stmt) -> Stmt:
    """``stmt`` rebuilt from new statement objects (structurally equal, never identical).

    >>> copy = fresh_copy(loop); copy is loop, copy == loop     # False, True
    """
    return _Fresh().visit(stmt)
