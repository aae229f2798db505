"""The statements that make a fact of a condition for what runs after them.

* ``T.assume(c)``: the function's author promises ``c`` holds there (the
  executors check it);
* ``assert c, msg`` on plain values (:func:`~polypad.ir.opaque.is_plain_check`; TVM's packed
  functions open with ``assert n == 128, ...``): the call raises where ``c`` is
  false, so every statement after it in program order runs only where ``c``
  held.  A statement *before* it learns nothing (it ran before the check), and
  the assert itself is never a no-op: it may raise, so nothing removes it or
  moves a statement across it.

Both are read the same way wherever facts are gathered: by the deciders (the
parameter context of a site, :meth:`analyses.program.Program.parameter_context`;
the integer facts folded into a context's domain,
:func:`analyses.path_facts.int_assume_facts`; the facts about buffer contents,
:mod:`analyses.facts`) and by :mod:`polypad.transform.simplify` and
:func:`polypad.transform.facts_at.facts_at`, each for the points after the
statement.
"""

from __future__ import annotations

from .nodes import Call, Evaluate, Expr, Stmt
from .opaque import is_plain_check


def stated_condition(stmt: Stmt) -> Expr | None:
    """The condition ``stmt`` states for what runs after it: ``c`` of ``T.assume(c)`` or
    of a plain ``assert c, msg``; None for any other statement."""
    if isinstance(stmt, Evaluate) and isinstance(stmt.value, Call) \
            and stmt.value.op == "assume":
        return stmt.value.args[0]
    if is_plain_check(stmt):
        return stmt.condition
    return None
