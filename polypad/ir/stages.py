"""Stages and sequences: the statements a function runs one after another, and
inserting new ones among them.

A *stage* is what RFC 0077 places padding writes and cache copies relative
to: the outermost statement around an access that is not merely a
container.  Sequences, allocations and let bindings are containers (a stage
inside an ``Allocate`` is still a stage of the function); a loop, a block, a
store or an ``if`` is a stage.  So in::

    A_cache = T.alloc_buffer(14)
    for i in T.serial(14):             # stage 1
        with T.block("A_cache"):
            A_cache[i] = A[i]
    for i in T.serial(14):             # stage 2
        ...

the write of ``A_cache`` belongs to stage 1, and a padding stage goes right
after it, inside the allocation.  :func:`seq` builds a flat sequence; the
schedule rewrites build every new sequence with it, and the passes with
:func:`sequence` (which drops the statements a rewrite removed).
"""

from __future__ import annotations

from collections.abc import Iterable

from . import nodes as n
from .locate import ancestors, replace
from .visitor import walk

CONTAINERS = (n.SeqStmt, n.Allocate, n.LetStmt)


def stage_of(func: n.PrimFunc, node) -> n.Stmt:
    """The stage of ``func`` that holds ``node`` (see the module docstring)."""
    for outer in ancestors(func, node):
        if not isinstance(outer, CONTAINERS):
            return outer
    return node


def stores_to(root, buffer: n.Buffer) -> list[n.BufferStore]:
    """Every store to ``buffer`` under ``root``, in program order."""
    body = root.body if isinstance(root, n.PrimFunc) else root
    return [s for s in walk(body) if isinstance(s, n.BufferStore) and s.buffer is buffer]


def loads_of(root, buffer: n.Buffer) -> list[n.BufferLoad]:
    """Every load of ``buffer`` under ``root``, in program order."""
    body = root.body if isinstance(root, n.PrimFunc) else root
    return [e for e in walk(body) if isinstance(e, n.BufferLoad) and e.buffer is buffer]


def insert_after(func: n.PrimFunc, stage: n.Stmt, new: n.Stmt) -> n.PrimFunc:
    """``func`` with ``new`` run right after ``stage``."""
    return _insert(func, stage, new, after=True)


def insert_before(func: n.PrimFunc, stage: n.Stmt, new: n.Stmt) -> n.PrimFunc:
    """``func`` with ``new`` run right before ``stage``."""
    return _insert(func, stage, new, after=False)


def prepend(func: n.PrimFunc, new: n.Stmt, scope: n.Allocate | None = None) -> n.PrimFunc:
    """``func`` with ``new`` run first: in the whole body, or first inside ``scope``."""
    if scope is None:
        body = seq(new, func.body)
        return n.PrimFunc(func.name, func.params, body, func.attrs)
    return replace(func, scope, n.Allocate(scope.buffer, seq(new, scope.body), span=scope.span))


def allocate_from(func: n.PrimFunc, stage: n.Stmt, buffer: n.Buffer,
                  first: tuple[n.Stmt, ...] = (), then: tuple[n.Stmt, ...] = ()
                  ) -> n.PrimFunc:
    """``func`` with ``buffer`` allocated from ``stage`` to the end of its sequence.

    ``first`` runs inside the allocation before ``stage``, ``then`` right after
    it: ``[..., stage, rest...]`` becomes ``[..., Allocate(buffer, [*first,
    stage, *then, rest...])]``, as ``T.alloc_buffer`` written before ``stage``
    reads.
    """
    parent = _parent(func, stage)
    if isinstance(parent, n.SeqStmt):
        k = _index(parent, stage)
        tail = (*first, stage, *then, *parent.stmts[k + 1:])
        head = parent.stmts[:k]
        alloc = n.Allocate(buffer, seq(*tail))
        return replace(func, parent, seq(*head, alloc) if head else alloc)
    return replace(func, stage, n.Allocate(buffer, seq(*first, stage, *then)))


def flatten(stmts: Iterable[n.Stmt | None]) -> tuple[n.Stmt, ...]:
    """``stmts`` in order, each ``SeqStmt`` among them replaced by its statements and
    each ``None`` (a statement a rewrite removed) left out."""
    flat: list[n.Stmt] = []
    for s in stmts:
        if s is not None:
            flat.extend(s.stmts if isinstance(s, n.SeqStmt) else (s,))
    return tuple(flat)


def sequence(*stmts: n.Stmt | None, span: n.Span | None = None) -> n.Stmt | None:
    """One statement running ``stmts`` in order (:func:`flatten`): a single statement is
    itself, none is None."""
    flat = flatten(stmts)
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else n.SeqStmt(flat, span=span)


def seq(*stmts: n.Stmt) -> n.Stmt:
    """One statement running ``stmts`` in order; nested sequences are flattened (none
    is the empty sequence)."""
    found = sequence(*stmts)
    return n.SeqStmt(()) if found is None else found


def _insert(func: n.PrimFunc, stage: n.Stmt, new: n.Stmt, *, after: bool) -> n.PrimFunc:
    parent = _parent(func, stage)
    if isinstance(parent, n.SeqStmt):
        k = _index(parent, stage) + (1 if after else 0)
        return replace(func, parent, seq(*parent.stmts[:k], new, *parent.stmts[k:]))
    return replace(func, stage, seq(stage, new) if after else seq(new, stage))


def _parent(func: n.PrimFunc, stage: n.Stmt):
    path = ancestors(func, stage)
    return path[-2] if len(path) > 1 else None


def _index(parent: n.SeqStmt, stage: n.Stmt) -> int:
    return next(k for k, s in enumerate(parent.stmts) if s is stage)
