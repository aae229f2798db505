"""A reduction block over a thread axis written as TVM's ``tvm_thread_allreduce``.

TVM's ``LowerCrossThreadReduction``, for the ``cuda`` target.  A ``T.init()``
block whose reduction loops are a chain of loops holding nothing but the
block, one of them bound to ``threadIdx``, the others serial::

    for i in T.thread_binding(64, thread="blockIdx.x"):
        for ko in range(4):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(64, i)
                    vk = T.axis.reduce(128, ko * 32 + tx)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

becomes one thread loop in which each thread first folds its own offers (the
serial loops, in their order: its partial result, as TVM's in-thread
reduction), then offers that to a :class:`~polypad.ir.nodes.ThreadAllReduce`,
and thread 0 combines the init value with the result::

    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B_in_thread = T.alloc_buffer((1,), scope="local")
        B_cross_thread = T.alloc_buffer((1,), scope="local")
        for ko in range(4):
            with T.block("B_in_thread"):
                vi = i; vk = ko * 32 + tx
                if ko == 0:
                    B_in_thread[0] = A[vi, vk]
                else:
                    B_in_thread[0] = B_in_thread[0] + A[vi, vk]
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
            T.tvm_thread_allreduce(T.uint32(1), B_in_thread[0], T.bool(True),
                                   B_cross_thread[0], tx)
        with T.block("B_write_back"):
            vi = i
            if tx == 0:
                B[vi] = T.float32(0) + B_cross_thread[0]

Without serial loops the thread offers the block's own values.  The
combiner is the block's update read as ``f(old, offers)``
(:mod:`.block_combiner`); the serial program folds the offers into the init
value in order, and the rewrite gives ``f(init, tree of the offers)``, which
is the same exactly when ``f`` is commutative and associative, which Z3
proves (:func:`analyses.reducer_laws.reducer_laws`; a combiner it refutes is
refused with its values, as a lowered reduction's is, one it does not decide
left as it is) before the
caller lowers the :class:`~polypad.ir.nodes.ThreadAllReduce` into its tree
(:mod:`polypad.semantics.lower_allreduce`).  Where several readings of the
update exist, the first one Z3 proves is taken.  No identity is needed: every
thread offers, and the first serial iteration stores its offer.  It also
needs the init to run once, at the chain's first iteration, before every
update, which Z3 proves over the chain's loop ranges.

A ``T.where`` that reads none of the chain's loops (dlight's GEMV masks the
rows past the end by ``threadIdx.y``) holds for a whole group of threads or
for none: the group's threads then offer the reducer's zeros to a tree whose
result is never stored (the write-back is under the condition too), and skip
their serial passes.  A ``T.where`` on the reduction's loops (a split that
does not divide) masks single iterations: as TVM, each thread's fold starts
from the combiner's identity and skips them, and a masked thread offers it;
polypad takes the init value as the identity where Z3 proves it one (a sum's
0; a max, in reals, has none) and the condition true at the chain's first
iteration (where the serial program runs the init).  A block of any other
shape (a ``T.where`` on memory, or on the reduction's loops without those
proofs; allocations, no init, two thread loops or a spatial loop in the chain, a loop
of no constant range, a spatial
index that reads a reduction loop, an update that reads another element of a
target, an init that reads a target) is left as it is, for the atomic updates of
:mod:`.cross_thread_atomics` or the target's race refusal.
"""

from __future__ import annotations

import dataclasses

import z3

from analyses.evidence import Proved, Refuted
from analyses.gpu_threads import THREAD_AXES
from analyses.reducer_laws import identity_law, reducer_laws, require_reducer_laws
from polypad.ir import nodes as n
from polypad.ir.block_header import layout
from polypad.ir.nodes_block import BlockHeader
from polypad.ir.operators import const, eq, logical_and
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import Rewriter, walk

from .block_combiner import BlockCombiner, block_combiners

_SERIAL = (n.ForKind.SERIAL, n.ForKind.UNROLL)


def lower_cross_thread_reduction(func: n.PrimFunc) -> n.PrimFunc:
    """``func`` with each reduction block over a thread axis that has the shape of the
    module docstring written as a ``ThreadAllReduce`` (``func`` itself where none)."""
    taken = {b.name for b in func.params if isinstance(b, n.Buffer)}
    taken |= {x.buffer.name for x in walk(func.body) if isinstance(x, (n.Allocate, n.DeclBuffer))}
    body = _Lower(taken, func.name).visit(func.body)
    return func if body is func.body else dataclasses.replace(func, body=body)


class _Lower(Rewriter):
    def __init__(self, taken: set[str], name: str):
        self.taken = taken
        self.name = name
        self.outer: list[n.For] = []  # the thread loops around the one visited
        self.ranges: dict[n.Var, tuple[int, int]] = {}  # of the loops around it

    def visit_For(self, loop: n.For):
        found = _chain(loop)
        if found is not None and self._groups_fit(found[1]):
            made = _lowered(*found, self.taken, self.name, self.ranges)
            if made is not None:
                return made
        threaded = loop.kind in THREAD_AXES
        if threaded:
            self.outer.append(loop)
        if isinstance(loop.min, n.IntImm) and isinstance(loop.extent, n.IntImm):
            self.ranges[loop.var] = (loop.min.value, loop.min.value + loop.extent.value - 1)
        try:
            return self.generic_visit(loop)
        finally:
            self.ranges.pop(loop.var, None)
            if threaded:
                self.outer.pop()

    def _groups_fit(self, thread: n.For) -> bool:
        """Whether the thread loops around the chain make groups the tree can index (from
        0, of constant extents) on other axes than the reduction's."""
        return all(o.kind != thread.kind and isinstance(o.extent, n.IntImm)
                   and isinstance(o.min, n.IntImm) and o.min.value == 0 for o in self.outer)


def _chain(top: n.For):
    """``(loops, thread, block)``: the loops from ``top`` down to the one ``T.init()``
    block they hold, one of them (``thread``) bound to ``threadIdx`` from 0, the others
    serial, all of constant ranges; ``None`` where ``top`` starts no such chain.  That
    they are exactly the block's reduction loops is :func:`_lowered`'s to check."""
    loops = [top]
    while isinstance(loops[-1].body, n.For):
        loops.append(loops[-1].body)
    block = loops[-1].body
    if not (isinstance(block, n.Block) and block.header is not None and block.header.init):
        return None
    threads = [x for x in loops if x.kind in THREAD_AXES]
    if len(threads) != 1 or any(x.kind not in (*_SERIAL, *THREAD_AXES) for x in loops):
        return None
    if not all(isinstance(x.min, n.IntImm) and isinstance(x.extent, n.IntImm)
               and x.extent.value >= 1 for x in loops):
        return None
    if threads[0].min.value != 0 or threads[0].extent.value < 2:
        return None
    return loops, threads[0], block


def _lowered(loops: list[n.For], thread: n.For, block: n.Block, taken: set[str],
             name: str, outside: dict) -> n.Stmt | None:
    parts = layout(block.body, block.header)
    if parts.allocates or parts.init is None:
        return None
    axes = {a.var: a for a in block.header.axes}
    values = {let.var: let.value for let in parts.lets}
    chain = {x.var for x in loops}
    reduce_uses = set()
    for var, value in values.items():
        used = set(free_vars(n.Evaluate(value)))
        if axes[var].kind == "R":
            reduce_uses |= used
        elif used & chain:
            return None  # a spatial index that moves with a reduction loop
    if reduce_uses != chain:
        return None  # the chain is not the reduction's loops, or not all of them
    combiners = block_combiners(parts.init, parts.after)
    if not combiners:
        return None
    spatial_reads = set()
    some = combiners[0]  # every reading has the same stores and inits
    for expr in (*some.inits, *(i for s in some.stores for i in s.indices)):
        spatial_reads |= set(free_vars(n.Evaluate(substitute(expr, values))))
    if spatial_reads & chain:
        return None
    # An init reading a target (``Q[vi] = S[vi]``) would read, in the write-back, what
    # that write-back stored there before (one target after the other).
    targets = {s.buffer for s in some.stores}
    if any(isinstance(x, n.BufferLoad) and x.buffer in targets for v in some.inits
           for x in walk(v)):
        return None
    if not _init_only_first(parts.init.condition, values, loops):
        return None
    group = masked = None
    if parts.where is not None:
        where = substitute(parts.where.condition, values)
        if any(isinstance(x, n.BufferLoad) for x in walk(where)):
            return None  # memory may change between the iterations that read it
        # The conjuncts that read no reduction loop hold for a whole group or for none;
        # the others mask single iterations, which then offer the combiner's identity.
        parts_of = _conjuncts(where)
        apart = [c for c in parts_of if set(free_vars(n.Evaluate(c))) & chain]
        together = [c for c in parts_of if c not in apart]
        group = logical_and(*together) if together else None
        masked = logical_and(*apart) if apart else None
    combiner = next((c for c in combiners if isinstance(reducer_laws(c.reducer), Proved)),
                    None)
    if combiner is None:
        if not isinstance(reducer_laws(some.reducer), Refuted):
            return None  # undecided (a bitwise or): left for the atomics, as before
        # Refused with the first reading's values, as a lowered one is.
        require_reducer_laws(name, _allreduce(some, some.offers, (), (), thread, block))
    if masked is not None:
        combiner = _with_identity(combiner, masked, group, loops, outside)
        if combiner is None:
            return None
    return _rewrite(loops, thread, block, parts, combiner, group, masked, taken)


def _conjuncts(cond: n.Expr) -> list[n.Expr]:
    return [*_conjuncts(cond.a), *_conjuncts(cond.b)] if isinstance(cond, n.And) else [cond]


def _with_identity(combiner: BlockCombiner, masked: n.Expr, group: n.Expr | None,
                   loops: list[n.For], outside: dict) -> BlockCombiner | None:
    """``combiner`` offering its init values where ``masked`` fails, where Z3 proves them
    an identity of its combiner (a sum's 0) and ``masked`` true at the chain's first
    iteration wherever ``group`` holds (there the init runs, as in the serial program,
    which leaves an element whose first iteration is masked without its init)."""
    from polypad.model.z3conv import Z3Env, to_z3

    if any(isinstance(x, (n.Var, n.BufferLoad)) for v in combiner.inits for x in walk(v)):
        return None
    if not identity_law(combiner.reducer, combiner.inits):
        return None
    ranges = {**outside, **{x.var: (x.min.value, x.min.value + x.extent.value - 1)
                            for x in loops}}
    env = Z3Env(ranges)
    first = substitute(masked, {x.var: x.min for x in loops})
    solver = z3.Solver(ctx=env.ctx)
    solver.set("timeout", 5000)
    facts = [to_z3(first, env)] + ([to_z3(group, env)] if group is not None else [])
    solver.add(*env.side)
    for var, (lo, hi) in ranges.items():
        solver.add(env.var(var) >= lo, env.var(var) <= hi)
    solver.add(*facts[1:], z3.Not(facts[0]))
    if solver.check() != z3.unsat:
        return None
    reducer = dataclasses.replace(combiner.reducer, identities=combiner.inits)
    return dataclasses.replace(combiner, reducer=reducer)


def _init_only_first(condition: n.Expr, values: dict, loops: list[n.For]) -> bool:
    """Whether the init's condition holds at the chain's first iteration and nowhere
    else in it, for every value of what lies outside (Z3, over the loops' ranges)."""
    from polypad.model.z3conv import Z3Env, to_z3

    ranges = {x.var: (x.min.value, x.min.value + x.extent.value - 1) for x in loops}
    env = Z3Env(ranges)
    first = logical_and(*(eq(x.var, x.min) for x in loops))
    runs = to_z3(substitute(condition, values), env)
    at_first = to_z3(first, env)
    solver = z3.Solver(ctx=env.ctx)
    solver.set("timeout", 5000)
    solver.add(*env.side)
    for x in loops:
        v = env.var(x.var)
        solver.add(v >= x.min.value, v < x.min.value + x.extent.value)
    solver.add(runs != at_first)
    return solver.check() == z3.unsat


def _rewrite(loops, thread: n.For, block: n.Block, parts, combiner: BlockCombiner,
             group: n.Expr | None, masked: n.Expr | None, taken: set[str]) -> n.Stmt:
    serial = [x for x in loops if x is not thread]
    stores = combiner.stores
    cross = tuple(_local(f"{s.buffer.name}_cross_thread", s.buffer.dtype, taken) for s in stores)
    origin = (const(0, thread.var.dtype),)
    axes = block.header.axes
    spatial = [k for k, axis in enumerate(axes) if axis.kind != "R"]
    results = combiner.combined(combiner.inits, tuple(n.BufferLoad(c, origin) for c in cross))
    back = _seq([n.BufferStore(s.buffer, r, s.indices, span=s.span)
                 for s, r in zip(stores, results)])
    first = eq(thread.var, 0)
    write = n.IfThenElse(first if group is None else logical_and(group, first), back)
    where = group if masked is None else masked if group is None else logical_and(group, masked)
    if serial:  # after the serial loops: the spatial axes bound again
        write_back = n.Block(f"{block.name}_write_back",
                             _under([parts.lets[k] for k in spatial], write),
                             BlockHeader(axes=tuple(axes[k] for k in spatial), where=True))
        partial = tuple(_local(f"{s.buffer.name}_in_thread", s.buffer.dtype, taken)
                        for s in stores)
        fold = _in_thread_fold(serial, parts.lets, block, combiner, partial, origin, where,
                               masked is not None)
        offers = tuple(n.BufferLoad(p, origin) for p in partial)
        reduction = _allreduce(combiner, offers, cross, origin, thread, block, group)
        body: n.Stmt = n.SeqStmt((*fold, reduction, write_back))
        locals_ = (*partial, *cross)
    else:  # under the block's axes, as the offers
        write_back = n.Block(f"{block.name}_write_back", write, None)
        reduction = _allreduce(combiner, combiner.offers, cross, origin, thread, block, where)
        body = _under(list(parts.lets), n.SeqStmt((reduction, write_back)))
        locals_ = cross
    for buffer in reversed(locals_):
        body = n.Allocate(buffer, body)
    return dataclasses.replace(thread, body=body)


def _in_thread_fold(serial: list[n.For], lets, block: n.Block, combiner: BlockCombiner,
                    partial, origin, where: n.Expr | None,
                    from_identity: bool) -> tuple[n.Stmt, ...]:
    """The serial loops folding this thread's offers into ``partial``: the first
    iteration stores its offers, each later one combines (none where ``where`` fails);
    ``from_identity``: the fold starts from the reducer's identity instead, stored
    first, each iteration combining (some iterations may be masked, the first too)."""
    first = logical_and(*(eq(x.var, x.min) for x in serial))
    start = _seq([n.BufferStore(p, o, origin) for p, o in zip(partial, combiner.offers)])
    olds = tuple(n.BufferLoad(p, origin) for p in partial)
    new = combiner.combined(olds, combiner.offers)
    if len(partial) == 1:
        step: n.Stmt = n.BufferStore(partial[0], new[0], origin)
    else:  # every new value from the old ones, then the stores
        names = [n.Var(f"{p.name}_next", p.dtype) for p in partial]
        step = _seq([n.BufferStore(p, v, origin) for p, v in zip(partial, names)])
        for var, value in reversed(list(zip(names, new))):
            step = n.LetStmt(var, value, step)
    fold: n.Stmt = step if from_identity else n.IfThenElse(first, start, step)
    if where is not None:
        fold = n.IfThenElse(where, fold)
    inner: n.Stmt = n.Block(f"{block.name}_in_thread", _under(list(lets), fold),
                            BlockHeader(axes=block.header.axes, where=where is not None))
    for loop in reversed(serial):
        inner = dataclasses.replace(loop, body=inner)
    if not from_identity:
        return (inner,)
    identity = _seq([n.BufferStore(p, i, origin)
                     for p, i in zip(partial, combiner.reducer.identities)])
    return (identity, inner)


def _allreduce(combiner: BlockCombiner, offers, cross, origin, thread: n.For,
               block: n.Block, where: n.Expr | None = None) -> n.ThreadAllReduce:
    # A thread whose T.where fails offers the reducer's identities: zeros where its whole
    # group fails (a condition that reads no reduction loop: the group's result is never
    # stored), the init values, proved an identity, where single threads are masked.
    condition = n.BoolImm(True) if where is None else where
    return n.ThreadAllReduce(combiner.reducer, tuple(offers), condition,
                             tuple(n.BufferLoad(c, origin) for c in cross), (thread.var,),
                             const(0), span=block.span)


def _local(name: str, dtype: str, taken: set[str]) -> n.Buffer:
    """A one-element local buffer named ``name`` (or ``name_1``...), not yet ``taken``."""
    out, k = name, 0
    while out in taken:
        k += 1
        out = f"{name}_{k}"
    taken.add(out)
    return n.Buffer(out, (1,), dtype, scope="local")


def _under(lets: list[n.LetStmt], stmt: n.Stmt) -> n.Stmt:
    for let in reversed(lets):
        stmt = n.LetStmt(let.var, let.value, stmt, span=let.span)
    return stmt


def _seq(items: list[n.Stmt]) -> n.Stmt:
    return items[0] if len(items) == 1 else n.SeqStmt(tuple(items))


__all__ = ["lower_cross_thread_reduction"]
