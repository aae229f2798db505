"""TVM's let form of a reduction's update, read as its stores.

TVM prints an update of several buffers (its argmax, argmin) with the new
values bound by lets first and stored after (``T.Select`` reads as
``T.if_then_else``)::

    v_argmax_v0: T.int32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v0[i], idx[i, k])
    v_argmax_v1: T.float32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v1[i], val[i, k])
    argmax_v0[i] = v_argmax_v0
    argmax_v1[i] = v_argmax_v1

:func:`inline_update_lets` rewrites it as the stores alone, the values
inlined, in the order :mod:`analyses.combiners` reads -- an argmax's index
store first, whatever order TVM stored them in::

    argmax_v0[i] = T.if_then_else(argmax_v1[i] >= val[i, k], argmax_v0[i], idx[i, k])
    argmax_v1[i] = T.if_then_else(argmax_v1[i] >= val[i, k], argmax_v1[i], val[i, k])

Exact: both lets read the buffers before either store, and the stores are
put in an order where no store reads (or writes) a buffer stored before it,
so each reads what the let read.  Only a chain that then reads as a reduction
update (one store) or an arg-reduction (two) is rewritten; anything else is
left as it was, for the primitive to judge.

``rfactor`` and ``decompose_reduction`` call it, and keep its result.  The
model reads the let form as written (:mod:`polypad.model.nest` reads a let at
the stores that use it): TVM's argmax order, index stored first, models; its
argmin order, value stored first, does not (``NotAffineError``: the index's let
read the value before the value's store changed it).  So the primitives that
only ask the deciders about a function (``reorder``, ``tile``, ``parallel``,
``vectorize``) ask about :func:`read_as_stores` of it, the same function with
the stores in order, and rewrite the function as it was: its lets stay.  The
answer is the same: a loop iteration runs the let chain or its stores whole,
with the same effect, so each dependence between iterations is one of both.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from itertools import permutations

from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.views import root
from polypad.ir.visitor import Rewriter, walk
from polypad.model import extract

from .reduction_nest import reads


def inline_update_lets(func: n.PrimFunc, root: n.For) -> tuple[n.PrimFunc, n.For]:
    """``func`` with every update in the let form under the loop ``root`` read as its
    stores (see the module docstring), and the loop as it became; both themselves
    where there is none."""
    new = _Inline().visit(root)
    return (func, root) if new is root else (replace(func, root, new), new)


def read_as_stores(func: n.PrimFunc, *stmts: list[n.Stmt], memo: dict | None = None
                   ) -> tuple[n.PrimFunc, list[list[n.Stmt]]]:
    """``func`` with every update in the let form read as its stores (as
    :func:`inline_update_lets` reads them), for the deciders, and each list of
    ``stmts`` (statements of ``func``: loops, moved statements) as they are in it;
    ``func`` and the lists themselves where there is no let form.

    A statement object stands for one object in the result wherever it is (a
    partition's tail shares statements with its main nest): a loop still names
    every place it stands.  Two functions read with the same ``memo`` (a dict, empty
    at first) share that too: a statement they both hold is one object in both.
    """
    rewriter = _InlineShared({} if memo is None else memo)
    body = rewriter.visit(func.body)
    if body is func.body:
        return func, [list(x) for x in stmts]
    return (dataclasses.replace(func, body=body),
            [[rewriter.done[id(x)][1] for x in chain] for chain in stmts])


@contextmanager
def asked_as_stores(func: n.PrimFunc, *stmts: list[n.Stmt], memo: dict | None = None):
    """:func:`read_as_stores` of ``func`` and ``stmts``, for a decider's question.

    The evidence of a refusal raised inside names statements of that function,
    whose stores may stand in another order than ``func``'s (TVM's argmin: the
    index's store first); the message then says which buffer each of them
    stores, so that ``argmin_2`` is not read as ``func``'s third statement.
    """
    seen, mapped = read_as_stores(func, *stmts, memo=memo)
    try:
        yield seen, mapped
    except IllegalTransformError as error:
        note = "" if seen is func else _stores_named(func, seen, error.evidence)
        if not note:
            raise
        raise type(error)(f"{error}{note}", error.evidence) from error


def _stores_named(func: n.PrimFunc, seen: n.PrimFunc, evidence) -> str:
    """Which buffer each statement of ``evidence`` that the let form became stores,
    where the stores of ``seen`` stand in another order than ``func``'s."""
    from analyses.instances import labels

    def stored(f):
        return [x.buffer for x in walk(f.body) if isinstance(x, n.BufferStore)]

    if stored(seen) == stored(func):
        return ""  # the stores in their places: the labels are func's own
    model = extract(seen)
    names = labels(model)
    wanted = {x.statement for x in getattr(evidence, "instances", ())}
    kept = {id(x) for x in walk(func.body)}
    made = [f"{names[s.name]} stores {s.stmt.buffer.name}" for s in model.statements
            if names[s.name] in wanted and id(s.stmt) not in kept
            and isinstance(s.stmt, n.BufferStore)]
    if not made:
        return ""
    return ("; (TVM's let form read as its stores, in the order that reads the same: "
            + ", ".join(made) + ")")


class _Inline(Rewriter):
    def visit_LetStmt(self, node: n.LetStmt):
        stores = _stores_of(node)
        if stores is None:
            return self.generic_visit(node)
        return stores[0] if len(stores) == 1 else n.SeqStmt(stores)

    def visit_SeqStmt(self, node: n.SeqStmt):
        # Flat, as the parser reads it: the stores join the sequence that held the lets.
        new = [self.visit(x) for x in node.stmts]
        if all(a is b for a, b in zip(new, node.stmts, strict=True)):
            return node
        return n.SeqStmt(tuple(y for x, old in zip(new, node.stmts, strict=True)
                               for y in (x.stmts if isinstance(x, n.SeqStmt)
                                         and isinstance(old, n.LetStmt) else (x,))))


class _InlineShared(_Inline):
    """:class:`_Inline` that rewrites a statement object once, wherever it stands."""

    def __init__(self, done: dict) -> None:
        #: id of each statement visited -> (the statement, kept alive; its rewrite)
        self.done: dict[int, tuple[n.Stmt, n.Stmt]] = done

    def visit(self, node):
        if isinstance(node, n.Expr):
            return node  # the let form is statements: no expression changes
        if not isinstance(node, n.Stmt):
            return super().visit(node)
        found = self.done.get(id(node))
        if found is None:
            found = self.done[id(node)] = (node, super().visit(node))
        return found[1]


def _stores_of(chain: n.LetStmt) -> tuple[n.BufferStore, ...] | None:
    """The stores of ``chain`` with the lets inlined, in the order the combiners read,
    or ``None`` where it is not the let form of an update."""
    # analyses imports polypad, whose import runs this module: imported on use.
    from analyses.combiners import arg_update_of, update_of

    values: dict[n.Var, n.Expr] = {}
    body: n.Stmt = chain
    while isinstance(body, n.LetStmt):
        values[body.var] = substitute(body.value, values)
        body = body.body
    stores = body.stmts if isinstance(body, n.SeqStmt) else (body,)
    if not 1 <= len(stores) <= 2 or not all(isinstance(x, n.BufferStore) for x in stores):
        return None
    # Each let stored once, whole: the stores hold the lets' values and nothing else.
    stored = [x.value for x in stores]
    if not all(isinstance(v, n.Var) and v in values for v in stored) \
            or len(set(stored)) != len(stored) or set(values) != set(stored):
        return None
    if any(set(free_vars(i)) & set(values) for x in stores for i in x.indices):
        return None
    inlined = [n.BufferStore(x.buffer, values[x.value], x.indices) for x in stores]
    for order in permutations(inlined):
        if not _in_order(order):
            continue
        if len(order) == 1 and update_of(order[0]) is not None or \
                len(order) == 2 and arg_update_of(*order) is not None:
            return tuple(order)
    return None


def _in_order(stores) -> bool:
    """Whether no store reads or writes a buffer stored before it: each then reads
    the buffers as the lets did, before any store."""
    for k, x in enumerate(stores):
        before = [y.buffer for y in stores[:k]]
        if any(root(x.buffer) is root(b) or reads(x.value, b) or any(reads(i, b) for i in x.indices)
               for b in before):
            return False
    return True

