"""One statement object, one place: the check that no statement is shared.

Analyses tell statements apart by identity: ``is_no_op(f, stmt)``, the GPU
barrier plan (``analyses/gpu_sync.py``) and the schedule's handles all find
"this statement" with ``is``.  A tree in which one statement object sits in
two places makes those answers ambiguous -- a barrier planned for one place
is found at the other, and one that is needed vanishes without a word.  So a
pass or primitive that puts a statement in a second place must copy it
(:func:`polypad.ir.fresh_copy.fresh_copy`).

Only statements count.  Expressions are values and may be shared anywhere;
variables and buffers are identities *by design* and must be shared by every
use (a copy of a loop still stores to the same buffer).
"""

from __future__ import annotations

from .nodes import IRModule, PrimFunc, SeqStmt, Stmt
from .show import show
from .structural import spelled_path
from .visitor import node_fields

#: Where a statement is: the root's name, or (the parent's path, a suffix), spelled
#: only for a report (a string per statement would copy the path at every level).
_Path = str | tuple


def _statement_children(stmt: Stmt, path: _Path):
    """``(child, path)`` for every statement directly under ``stmt``."""
    if isinstance(stmt, SeqStmt):  # the common case, and the widest: no field lookup
        for k, child in enumerate(stmt.stmts):
            yield child, (path, f".stmts[{k}]")
        return
    for name in node_fields(stmt):
        value = getattr(stmt, name)
        if isinstance(value, Stmt):
            yield value, (path, "." + name)
        elif isinstance(value, tuple):
            for k, item in enumerate(value):
                if isinstance(item, Stmt):
                    yield item, (path, f".{name}[{k}]")


def _text(stmt: Stmt) -> str:
    """The statement's script text; a compound statement by its first line."""
    lines = show(stmt).splitlines() or [type(stmt).__name__]
    more = f" ... ({len(lines)} lines)" if len(lines) > 1 else ""
    return lines[0].strip() + more


def shared_statement_problems(node: PrimFunc | IRModule) -> list[str]:
    """One sentence for every statement object found in a second place under ``node``
    (every function of a module counts as one tree), naming the statement and both
    paths.  A shared subtree is reported once, at its top."""
    funcs = node.funcs if isinstance(node, IRModule) else (node,)
    seen: dict[int, _Path] = {}
    problems: list[str] = []
    for func in funcs:
        # Iterative: a 64-deep nest or a 10,000-statement sequence must not recurse.
        stack: list[tuple[Stmt, _Path]] = [(func.body, f"{func.name}.body")]
        while stack:
            stmt, path = stack.pop()
            if not isinstance(stmt, Stmt):
                continue  # a grammar problem, which the field check reports
            first = seen.get(id(stmt))
            if first is not None:
                problems.append(
                    f"statement `{_text(stmt)}` is one object in two places, "
                    f"{spelled_path(first)} and {spelled_path(path)} (analyses find statements "
                    "by identity: copy it with polypad.ir.fresh_copy)")
                continue
            seen[id(stmt)] = path
            stack.extend(reversed(list(_statement_children(stmt, path))))
    return problems
