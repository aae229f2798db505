"""Deep trees at the front doors: a call given a deep tree runs on a deep worker.

:func:`guarded` (from :mod:`polypad.ir.deep_worker`, re-exported here with
the rest of the worker) protects the recursive walkers that use it, one step
at a time.  :func:`deep_entry` protects everything under a public entry
point -- every pass (``budgeted_pass``), decider (``decider``, ``bounded``)
and schedule primitive (``primitive``): given a deep function, all of the
call runs on a worker's large stack.  Measuring how deep an argument is
needs the grammar and the visitor, so this module sits above them, and the
worker below the grammar.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from polypad.concurrency import Recent

from .deep_worker import (
    DEEP_RECURSION_LIMIT,
    HOP_DEPTH,
    STACK_SIZE,
    guard_generated_methods,
    guarded,
    in_worker,
    run_deep,
)
from .nodes import Expr, IRModule, PrimFunc, Stmt
from .visitor import children

__all__ = ["DEEP_RECURSION_LIMIT", "ENTRY_DEPTH", "HOP_DEPTH", "STACK_SIZE", "deep_entry",
           "guard_generated_methods", "guarded", "in_worker", "is_deep", "run_deep"]

F = TypeVar("F", bound=Callable)


def deep_entry(fn: F) -> F:
    """Decorate a public entry point: a call given a deep tree runs on a worker from the start.

    :func:`guarded` protects the walkers that use it; this protects
    everything under an entry point -- walkers that do not, and Python's own
    recursion through nested nodes' ``__eq__``, ``__hash__`` and
    ``__repr__``.  An argument counts as deep when it (a function, module,
    statement or expression) nests more than :data:`ENTRY_DEPTH` levels; a
    function's answer is remembered, so the check walks each function once.

    >>> @deep_entry
    ... def check_bounds(f): ...
    """

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        if not in_worker() and (any(map(is_deep, args)) or any(map(is_deep, kwargs.values()))):
            return run_deep(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    return entry  # type: ignore[return-value]


#: Tree levels under which every walker fits on an ordinary stack, guarded or not.
ENTRY_DEPTH = 48
_known = Recent(64)  # function -> deep?


def is_deep(obj) -> bool:
    """Whether ``obj`` is an IR tree nesting more than :data:`ENTRY_DEPTH` levels.

    Anything else (a string, a number, a buffer) is not.
    """
    if not isinstance(obj, (Expr, Stmt, PrimFunc, IRModule)):
        return False
    if not isinstance(obj, (PrimFunc, IRModule)):
        return _deeper_than(obj, ENTRY_DEPTH)
    found = _known.get((obj,))
    if found is not None:
        return found
    return _known.put((obj,), _deeper_than(obj, ENTRY_DEPTH))


def _deeper_than(root, limit: int) -> bool:
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children(node))
    return False
