"""The combiner of a reduction block: its update read as ``f(old values, offers)``.

A reduction block's update stores into each of its targets ``B_j[idx]`` an
expression of the targets' old values ``B_i[idx]`` and of what the iteration
brings: ``B[vi] = B[vi] + A[vi, vk]`` is ``f(x, y) = x + y`` with the offer
``y = A[vi, vk]``; TOPI's argmax, two targets updated through two lets,

    v0 = T.Select(v1[i] > x[i, k] or v1[i] == x[i, k] and v0[i] < k, v0[i], k)
    v1 = T.Select(v1[i] > x[i, k], v1[i], x[i, k])

is ``f((x0, x1), (y0, y1)) = (T.Select(x1 > y1 or x1 == y1 and x0 < y0, x0, y0),
T.Select(x1 > y1, x1, y1))`` with the offers ``(k, x[i, k])``.  The offers are
the largest parts of the update that read no target and are no constant, each
one once; there must be one per target, of its dtype.  The update is then
``f(old, offers)`` by construction, so a serial fold of the offers into the
init value is ``f(init, f(o_0, f(o_1, ...)))`` and, where ``f`` is commutative
and associative (:func:`analyses.reducer_laws.reducer_laws`), any tree of the
offers combined with the init gives the same: what a cross-thread lowering
needs (:mod:`.lower_cross_thread_reduction`).  Which offer goes with which
target is read from the dtypes; where two targets share one, each assignment
is a candidate, and the lowering takes the first whose laws Z3 proves.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from polypad.ir import nodes as n
from polypad.ir.operators import const
from polypad.ir.substitute import substitute
from polypad.ir.visitor import Rewriter, walk


@dataclass(frozen=True)
class BlockCombiner:
    """A reduction block's update as ``reducer`` applied to its targets' old values
    (``reducer.lhs``, one per store of ``stores``) and ``offers`` (``reducer.rhs``).
    ``inits`` are the values its init stores, one per target.  The reducer's
    identities are zeros, no identity of ``f`` in general: the lowering offers them
    only in a group of threads whose every thread is masked (a ``T.where`` that does
    not read the reduction's loops), whose result it never stores."""

    stores: tuple[n.BufferStore, ...]
    inits: tuple[n.Expr, ...]
    offers: tuple[n.Expr, ...]
    reducer: n.CommReducer

    def combined(self, old: tuple[n.Expr, ...], offers: tuple[n.Expr, ...]) -> tuple[n.Expr, ...]:
        """``f(old, offers)``, one expression per target."""
        mapping = {**dict(zip(self.reducer.lhs, old)), **dict(zip(self.reducer.rhs, offers))}
        return tuple(substitute(r, mapping) for r in self.reducer.results)


def block_combiners(init: n.IfThenElse, update: tuple[n.Stmt, ...]) -> list[BlockCombiner]:
    """The readings of a block's ``T.init()`` ``if`` and its update statements as
    ``f(old, offers)`` (module docstring), one per assignment of offers to targets;
    none where the update has another shape: lets, then one store per target, each
    at the index its init stores to, reading the targets at that index only."""
    inits = _stores((init.then_case,))
    stores = _update_stores(update)
    if inits is None or stores is None or len(stores) != len(inits):
        return []
    targets = {s.buffer: s for s in stores}
    init_of = {s.buffer: s for s in inits}
    if len(targets) != len(stores) or set(targets) != set(init_of) or any(
            init_of[s.buffer].indices != s.indices for s in stores):
        return []
    olds = tuple(n.Var(f"{s.buffer.name}_old", s.buffer.dtype) for s in stores)
    abstract = _Abstract({s.buffer: (s.indices, x) for s, x in zip(stores, olds)})
    results = tuple(abstract.visit(s.value) for s in stores)
    if abstract.wrong or len(abstract.terms) != len(stores):
        return []
    out = []
    for order in itertools.permutations(range(len(stores))):
        offers = tuple(abstract.terms[k][0] for k in order)
        if any(o.dtype != s.buffer.dtype for o, s in zip(offers, stores)):
            continue
        ys = tuple(abstract.terms[k][1] for k in order)
        # The offer variables take the names and dtypes of their targets.
        named = tuple(n.Var(f"{s.buffer.name}_offer", s.buffer.dtype) for s in stores)
        renamed = tuple(substitute(r, dict(zip(ys, named))) for r in results)
        values = tuple(init_of[s.buffer].value for s in stores)
        zeros = tuple(const(0, s.buffer.dtype) for s in stores)
        reducer = n.CommReducer(olds, named, renamed, zeros)
        out.append(BlockCombiner(stores, values, offers, reducer))
    return out


def _stores(stmts: tuple[n.Stmt, ...]) -> list[n.BufferStore] | None:
    out = []
    for stmt in stmts:
        items = stmt.stmts if isinstance(stmt, n.SeqStmt) else (stmt,)
        if not all(isinstance(x, n.BufferStore) for x in items):
            return None
        out.extend(items)
    return out


def _update_stores(update: tuple[n.Stmt, ...]) -> list[n.BufferStore] | None:
    """The update's stores with its lets substituted into their values."""
    lets: dict[n.Var, n.Expr] = {}
    stmts = update
    while len(stmts) == 1 and isinstance(stmts[0], n.LetStmt):
        let = stmts[0]
        lets[let.var] = substitute(let.value, lets)
        stmts = (let.body,)
    stores = _stores(stmts)
    if stores is None:
        return None
    return [n.BufferStore(s.buffer, substitute(s.value, lets), s.indices, span=s.span)
            for s in stores]


class _Abstract(Rewriter):
    """An update's value with each target load (at its store's index) made the target's
    old-value variable and each largest part that reads no target and is no constant
    made an offer variable, the same part (by equality) the same variable."""

    def __init__(self, targets: dict):
        self.targets = targets
        self.terms: list[tuple[n.Expr, n.Var]] = []
        self.wrong = False

    def visit(self, node):
        if isinstance(node, n.BufferLoad) and node.buffer in self.targets:
            indices, old = self.targets[node.buffer]
            if node.indices != indices:
                self.wrong = True  # another element of a target: no reduction into one
            return old
        if isinstance(node, n.Expr) and not any(
                isinstance(x, n.BufferLoad) and x.buffer in self.targets for x in walk(node)):
            if not any(isinstance(x, (n.Var, n.BufferLoad)) for x in walk(node)):
                return node  # a constant: part of the combiner
            for term, var in self.terms:
                if term == node:
                    return var
            var = n.Var(f"offer{len(self.terms)}", node.dtype)
            self.terms.append((node, var))
            return var
        return super().visit(node)


__all__ = ["BlockCombiner", "block_combiners"]
