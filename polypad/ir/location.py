"""Where a statement stands in its source, as every error message names it."""

from __future__ import annotations

from .nodes_stmt import Stmt


def source_location(stmt: Stmt | None) -> str:
    """`` at file:line`` of ``stmt``; empty where there is no statement or it has no
    source span.  The reference executor's errors, the compiled targets' checks and
    the analyses' evidence all name a place so."""
    if stmt is None or stmt.span is None:
        return ""
    return f" at {stmt.span.filename}:{stmt.span.line}"
