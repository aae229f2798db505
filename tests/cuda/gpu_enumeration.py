"""Barrier plans checked by brute force: every GPU thread of a small launch walked on
its own, counting the barriers it passes, against the serial program's order.

Two accesses of one element, one a write, by two threads of a block must be
separated by a barrier (the first, in serial order, has passed fewer); by two
blocks, never happen (unless the buffer is private to each).  This knows nothing
of isl: it runs the loops.

An index that reads memory (``A[X[i]]``, ``B[X[i]] = ...``) is evaluated with the
values given for the buffers it reads (``memory``): a plan made for every value
such an index may take is checked against a few actual ones.
"""

from __future__ import annotations

import contextlib
import itertools
import operator

from analyses.gpu_sync import BarrierPlan, plan_barriers
from analyses.gpu_threads import AXES, BLOCK_AXES
from polypad.ir import nodes as n
from polypad.ir.visitor import children, walk

# The values of the buffers an index reads, by name, while check_by_enumeration runs.
_MEMORY: dict = {}

_OPS = {n.Add: operator.add, n.Sub: operator.sub, n.Mul: operator.mul,
        n.FloorDiv: operator.floordiv, n.FloorMod: operator.mod, n.Min: min, n.Max: max,
        n.Lt: operator.lt, n.Le: operator.le, n.Gt: operator.gt, n.Ge: operator.ge,
        n.Eq: operator.eq, n.Ne: operator.ne}


def value(e, env):
    """An integer or boolean expression of loop counters (enough for these kernels)."""
    match e:
        case n.IntImm() | n.BoolImm():
            return e.value
        case n.Var():
            return env[e]
        case n.And():
            return value(e.a, env) and value(e.b, env)
        case n.Or():
            return value(e.a, env) or value(e.b, env)
        case n.Not():
            return not value(e.a, env)
        case n.BufferLoad():  # a data-dependent index: the value the memory holds
            return int(_MEMORY[e.buffer.name][tuple(value(i, env) for i in e.indices)])
        case n.Cast():
            return value(e.value, env)
    return _OPS[type(e)](value(e.a, env), value(e.b, env))


def accesses(stmt, env, out, plan, thread=None, launch=None, barriers=None, fresh=None):
    """Walk ``stmt``: serially (``thread`` None: every bound loop runs all its
    iterations), or as the GPU thread ``thread`` (bound loops fixed to its index,
    a store outside a loop of a launched axis on index 0 only), counting the barriers
    of ``plan`` it passes.  Appends (statement, counters, buffer, element, kind,
    barriers passed, copy) for every access: the copy is the values of the counters
    of the loops around the buffer's ``Allocate`` that give the GPU a copy of it per
    iteration -- block loops for shared memory, block and thread loops for local
    memory -- (``fresh`` maps a buffer to those counters); around a serial loop the
    GPU reuses one copy."""
    fresh = {} if fresh is None else fresh
    def barrier():
        if barriers is not None:
            barriers[0] += 1

    match stmt:
        case n.SeqStmt():
            slots = plan.at(stmt)
            for k, child in enumerate(stmt.stmts):
                if k in slots:
                    barrier()
                accesses(child, env, out, plan, thread, launch, barriers, fresh)
            if len(stmt.stmts) in slots:
                barrier()
        case n.For() if thread is not None and stmt.kind in AXES:
            index = thread[AXES.index(stmt.kind)]
            if index < value(stmt.extent, env):
                accesses(stmt.body, {**env, stmt.var: value(stmt.min, env) + index}, out,
                         plan, thread, launch, barriers, fresh)
        case n.For():
            start = value(stmt.min, env)
            for v in range(start, start + value(stmt.extent, env)):
                if 0 in plan.at(stmt):
                    barrier()
                accesses(stmt.body, {**env, stmt.var: v}, out, plan, thread, launch,
                         barriers, fresh)
                if 1 in plan.at(stmt):
                    barrier()
        case n.IfThenElse():
            branch = stmt.then_case if value(stmt.condition, env) else stmt.else_case
            if branch is not None:
                accesses(branch, env, out, plan, thread, launch, barriers, fresh)
        case n.BufferStore():
            if not _reads(stmt, _loads(stmt), env, out, thread, launch, barriers, fresh):
                return
            key = tuple(sorted((v.name, x) for v, x in env.items()))
            count = barriers[0] if barriers is not None else None
            out.append((id(stmt), key, stmt.buffer,
                        tuple(value(i, env) for i in stmt.indices), "write", count,
                        tuple(env[v] for v in fresh.get(stmt.buffer, ()))))
        case n.Allocate():
            axes = {"shared": BLOCK_AXES, "local": AXES}.get(stmt.buffer.scope, ())
            kinds = _loop_kinds(plan.structure)
            copies = tuple(v for v in env if kinds.get(v) in axes)
            accesses(stmt.body, env, out, plan, thread, launch, barriers,
                     {**fresh, stmt.buffer: copies})
        case n.LetStmt():
            try:  # an index the accesses under it read (a block's axis)
                env = {**env, stmt.var: value(stmt.value, env)}
            except (KeyError, AttributeError):
                # A value of memory (a tree step of two values: both read, then stored):
                # its loads run here, as a store's do.
                _reads(stmt, _loads_of(stmt.value), env, out, thread, launch, barriers, fresh)
            accesses(stmt.body, env, out, plan, thread, launch, barriers, fresh)
        case n.Block():
            accesses(stmt.body, env, out, plan, thread, launch, barriers, fresh)


def _reads(stmt, loads, env, out, thread, launch, barriers, fresh) -> bool:
    """Append the reads ``loads`` of ``stmt`` (a store, or a let of memory) where it runs
    on ``thread``; whether it runs there."""
    if thread is not None:
        bound = _kinds_around(launch.root)[id(stmt)]
        if any(thread[k] != 0 for k, axis in enumerate(AXES) if axis not in bound):
            return False
    key = tuple(sorted((v.name, x) for v, x in env.items()))
    count = barriers[0] if barriers is not None else None
    for load in loads:
        out.append((id(stmt), key, load.buffer,
                    tuple(value(i, env) for i in load.indices), "read", count,
                    tuple(env[v] for v in fresh.get(load.buffer, ()))))
    return True


def _loads_of(expr) -> list:
    return [x for x in walk(expr) if isinstance(x, n.BufferLoad)]


# Memos of the three questions the walk asks at every store and allocation it runs
# (a store's loads, the kinds of the loops around a store, each loop variable's kind):
# a walk of the launch per question made the enumeration quadratic in the kernel's size.
# Each entry keeps its key's object alive, so that no id is reused while it is here.
_KINDS_AROUND: dict[int, tuple[object, dict]] = {}
_LOOP_KINDS: dict[int, tuple[object, dict]] = {}
_LOADS: dict[int, tuple[object, list]] = {}


def _loads(store) -> list:
    """The loads of ``store``'s value and indices (those a scatter's index reads), in
    walk order."""
    memo = _LOADS.get(id(store))
    if memo is None:
        found = [x for e in (store.value, *store.indices) for x in walk(e)
                 if isinstance(x, n.BufferLoad)]
        memo = _LOADS[id(store)] = (store, found)
    return memo[1]


def _kinds_around(root) -> dict:
    """``id(store) -> {kinds of the loops around it}`` for every store (and let) under
    ``root``."""
    memo = _KINDS_AROUND.get(id(root))
    if memo is None:
        found: dict = {}
        stack = [(root, frozenset())]
        while stack:
            node, kinds = stack.pop()
            if isinstance(node, (n.BufferStore, n.LetStmt)):  # one may sit in two places
                found[id(node)] = found.get(id(node), frozenset()) | kinds
            if isinstance(node, n.For):
                stack.append((node.body, kinds | {node.kind}))
            elif isinstance(node, n.Stmt):
                stack.extend((child, kinds) for child in children(node))
        memo = _KINDS_AROUND[id(root)] = (root, found)
    return memo[1]


def _loop_kinds(structure) -> dict:
    """``loop variable -> kind`` for every loop of every launch of ``structure``."""
    memo = _LOOP_KINDS.get(id(structure))
    if memo is None:
        kinds = {x.var: x.kind for launch in structure.launches
                 for x in walk(launch.root) if isinstance(x, n.For)}
        memo = _LOOP_KINDS[id(structure)] = (structure, kinds)
    return memo[1]


def parameter_env(func, params: dict) -> dict:
    """The walk's starting environment: ``func``'s scalar parameters named in ``params``,
    bound to their values."""
    return {p: params[p.name] for p in func.params if isinstance(p, n.Var) and p.name in params}


def check_by_enumeration(func, drop: bool = False, plan: BarrierPlan | None = None,
                         params: dict | None = None, memory: dict | None = None):
    """Every two accesses of one element, one a write, on two threads: in one block,
    the first in the serial order has passed fewer barriers than the second; never in
    two blocks.  A private buffer (local: each thread its own copy; shared: each
    block) instead asks that every read's value, the serial program's last write
    to its element before it, was written by the same thread (block): two copies
    may be written in any order, but no value passes between them.
    ``drop`` checks a plan without its barriers (the check must then fail); ``plan``
    checks that plan instead of the one polypad makes; ``params`` gives the scalar
    parameters' values (by name); ``memory`` the values (numpy arrays, by buffer name)
    of the buffers a data-dependent index reads, which the launch must not write."""
    plan = plan_barriers(func) if plan is None else plan
    with holding(memory):
        return _check(func, drop, plan, params)


@contextlib.contextmanager
def holding(memory: dict | None):
    """Within the block, a data-dependent index reads ``memory`` (numpy arrays by
    buffer name): for :func:`accesses` called directly."""
    before = dict(_MEMORY)
    _MEMORY.clear()
    _MEMORY.update(memory or {})
    try:
        yield
    finally:
        _MEMORY.clear()
        _MEMORY.update(before)


def _check(func, drop, plan, params):
    assert isinstance(plan, BarrierPlan)
    if drop:
        plan.slots.clear()
    env = parameter_env(func, params or {})
    for launch in plan.structure.launches:
        serial: list = []
        accesses(launch.root, env, serial, plan)
        order = {(a[0], a[1], a[4], a[2], a[3]): k for k, a in enumerate(serial)}
        extents = [launch.constant_extent(axis) for axis in AXES]
        gpu = []
        for thread in itertools.product(*(range(e) for e in extents)):
            found: list = []
            accesses(launch.root, env, found, plan, thread, launch, [0])
            gpu += [(order[(a[0], a[1], a[4], a[2], a[3])], thread, a) for a in found]
        assert len(gpu) == len(serial)  # every instance runs once, on one thread
        by_element: dict = {}
        for entry in gpu:
            by_element.setdefault((entry[2][2], entry[2][3], entry[2][6]), []).append(entry)
        for (buffer, _, _), touches in by_element.items():
            ordered = sorted(touches, key=lambda entry: entry[0])
            if buffer.scope in ("local", "shared"):
                copy = 6 if buffer.scope == "local" else 3  # the indices that own a copy
                last = None
                for _, t, a in ordered:
                    if a[4] == "write":
                        last = t
                    elif last is not None:
                        assert last[:copy] == t[:copy], (buffer.name, a[3], last, t)
            for (_, t1, a), (_, t2, b) in itertools.combinations(ordered, 2):
                if t1 == t2 or (a[4] == "read" and b[4] == "read"):
                    continue
                if buffer.scope == "local" or (buffer.scope == "shared" and t1[:3] != t2[:3]):
                    continue  # each thread (block) has its own copy
                assert t1[:3] == t2[:3], (buffer.name, t1, t2)
                assert a[5] < b[5], (buffer.name, a[3], t1, t2)
    return plan
