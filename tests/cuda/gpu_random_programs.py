"""Random kernels of thread-bound loops over one shared buffer, and the brute-force
verdict on polypad's barrier plan for each.

Every kernel fills its shared buffer ``S`` from ``A`` (``R`` starts as the zeros
of a fresh allocation, which the cuda target fills in), runs a few random
phases that mostly read one shared buffer and write the other, at affine and
modular indices of the thread, of serial counters and of the block, under
conditions on the thread or on the block, and writes ``B`` from both.  Some
phases write ``B`` where another block writes too.

:func:`verdict` asks :func:`analyses.gpu_sync.plan_barriers` and checks its
answer with :mod:`gpu_enumeration`, which runs every thread's loops:

- a plan must order every pair of conflicting accesses (else ``"unsound"``),
  and each of its barriers must be needed: without it, some pair is
  unordered (else ``"redundant"``);
- a refusal must name two threads that touch the element it names, one
  writing (else ``"bad evidence"``), and no placement of barriers where
  every thread of a block reaches them may order every pair (else
  ``"over-refused"``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from gpu_enumeration import accesses, check_by_enumeration

import polypad as pp
from analyses import Refuted
from analyses.gpu_sync import BarrierPlan, plan_barriers
from analyses.gpu_threads import AXES, structure
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

THREADS = 8  # the block's threads (every kernel's first phase uses all of them)
SHARED = 16  # elements of S


@dataclass
class Verdict:
    """What polypad answered (``"plan"`` or ``"refused"``) and what the enumeration
    found wrong with it (``None``: nothing)."""

    answer: str
    finding: str | None
    detail: str = ""


def program_text(seed: int) -> str:
    """A random kernel in polypad's script syntax (deterministic in ``seed``)."""
    rng = random.Random(seed)
    blocks = rng.choice([1, 2])
    lines = [
        "@T.prim_func",
        f'def rand(A: T.Buffer(({blocks * SHARED},), "float32"), '
        f'B: T.Buffer(({blocks * THREADS},), "float32")):',
        f'    for bx in T.thread_binding({blocks}, thread="blockIdx.x"):',
        f'        S = T.alloc_buffer(({SHARED},), "float32", scope="shared")',
        f'        R = T.alloc_buffer(({SHARED},), "float32", scope="shared")',
        f'        for tx in T.thread_binding({THREADS}, thread="threadIdx.x"):',
        f"            for k in range({SHARED // THREADS}):",
        f"                S[k * {THREADS} + tx] = A[bx * {SHARED} + k * {THREADS} + tx]",
    ]
    for _ in range(rng.randint(1, 3)):
        lines += _phase(rng, blocks, depth=2, counters=[])
    out = _index(rng, ["tx"])
    lines += [f'        for tx in T.thread_binding({THREADS}, thread="threadIdx.x"):',
              f"            B[bx * {THREADS} + tx] = S[{out}] + R[{_index(rng, ['tx'])}]"]
    return "\n".join(lines) + "\n"


def _index(rng: random.Random, names: list[str]) -> str:
    """An index of S: affine in ``names`` (taken modulo its size where it may leave it)."""
    terms = [f"{rng.choice([1, 1, 2, 3])} * {name}" for name in names
             if name == "tx" or rng.random() < 0.7]
    constant = rng.randint(0, SHARED - 1)
    text = " + ".join([*terms, str(constant)]) if terms else str(constant)
    if rng.random() < 0.25 and "tx" in names:
        half = f"T.floordiv(tx, 2) + {constant // 2}"
        text = f"{SHARED - 1} - tx" if rng.random() < 0.5 else half
    return text if text.endswith("- tx") or "floordiv" in text else f"T.floormod({text}, {SHARED})"


def _phase(rng: random.Random, blocks: int, depth: int, counters: list[str]) -> list[str]:
    pad = "    " * depth
    kind = rng.choices(["threads", "serial", "block if", "inner serial", "global"],
                       [5, 2, 1, 2, 1 if blocks > 1 else 0])[0]
    if kind == "serial" and len(counters) < 1:
        name = f"k{depth}"
        body = []
        for _ in range(rng.randint(1, 2)):
            body += _phase(rng, blocks, depth + 1, [*counters, name])
        return [f"{pad}for {name} in range(2):", *body]
    if kind == "block if" and blocks > 1:
        return [f"{pad}if bx == {rng.randint(0, blocks - 1)}:",
                *_phase(rng, blocks, depth + 1, counters)]
    if kind == "global":
        return [f'{pad}for tx in T.thread_binding({THREADS}, thread="threadIdx.x"):',
                f"{pad}    B[tx] = A[tx]"]
    extent = rng.choice([THREADS, THREADS, THREADS // 2])
    head = [f'{pad}for tx in T.thread_binding({extent}, thread="threadIdx.x"):']
    inner = pad + "    "
    names = ["tx", *counters]
    if kind == "inner serial":
        head.append(f"{inner}for j in range(2):")
        inner += "    "
        names.append("j")
    if rng.random() < 0.3:
        head.append(f"{inner}if tx < {rng.randint(1, extent)}:")
        inner += "    "
    # Mostly from one shared buffer into the other (a value between phases); at times
    # into the buffer read (a value between threads of one phase).
    target, origin = rng.sample(["S", "R"], 2)
    if rng.random() < 0.2:
        origin = target
    write, read = _index(rng, names), _index(rng, names)
    source = f"{origin}[{read}] + " if rng.random() < 0.8 else ""
    return [*head, f"{inner}{target}[{write}] = {source}A[bx * {SHARED} + tx]"]


def parse(seed: int) -> n.PrimFunc:
    """The kernel of ``seed``, parsed."""
    return pp.parse(program_text(seed))


def verdict(func: n.PrimFunc) -> Verdict:
    """polypad's barrier plan for ``func``, checked by enumeration (module docstring)."""
    found = plan_barriers(func)
    if isinstance(found, BarrierPlan):
        try:
            check_by_enumeration(func, plan=found)
        except AssertionError as error:
            return Verdict("plan", "unsound", str(error))
        for key, slots in found.slots.items():
            for slot in sorted(slots):
                fewer = BarrierPlan(found.structure, {k: set(v) for k, v in found.slots.items()})
                fewer.slots[key].discard(slot)
                try:
                    check_by_enumeration(func, plan=fewer)
                except AssertionError:
                    continue
                return Verdict("plan", "redundant", f"slot {slot} of container {key}")
        return Verdict("plan", None)
    assert isinstance(found, Refuted)
    cex = found.counterexample
    if not _evidence_holds(func, cex):
        return Verdict("refused", "bad evidence", cex.description)
    everywhere = _every_uniform_slot(func)
    try:
        check_by_enumeration(func, plan=everywhere)
    except AssertionError:
        return Verdict("refused", None)
    return Verdict("refused", "over-refused", cex.description)


def _thread_of(text: str) -> tuple:
    """``"block (0, 0, 0) thread (3, 0, 0)"`` as (0, 0, 0, 3, 0, 0), the enumeration's
    thread (indices in the order of ``AXES``)."""
    digits = [int(x) for x in text.replace("(", " ").replace(")", " ").replace(",", " ").split()
              if x.lstrip("-").isdigit()]
    return tuple(digits)


def _evidence_holds(func: n.PrimFunc, cex) -> bool:
    """Both threads the counterexample names touch its element, and one of them writes."""
    first, second = (_thread_of(cex.values[k]) for k in ("first thread", "second thread"))
    plan = BarrierPlan(structure(func))
    kinds = {first: set(), second: set()}
    for launch in plan.structure.launches:
        for thread in (first, second):
            found: list = []
            accesses(launch.root, {}, found, plan, thread, launch, [0])
            kinds[thread] |= {a[4] for a in found if a[2].name == cex.element.buffer
                              and a[3] == tuple(cex.element.indices)}
    return first != second and all(kinds.values()) and "write" in kinds[first] | kinds[second]


def _every_uniform_slot(func: n.PrimFunc) -> BarrierPlan:
    """A plan with a barrier at every slot all threads of a block reach alike: not
    under a condition on a thread index, nor in a thread loop narrower than the
    block."""
    plan = BarrierPlan(structure(func))
    for launch in plan.structure.launches:
        extents = {axis: launch.constant_extent(axis) for axis in AXES}
        _fill(launch.root, plan, extents, frozenset())
    return plan


def _fill(stmt: n.Stmt, plan: BarrierPlan, extents: dict, threads: frozenset) -> None:
    """Slots everywhere below ``stmt`` that every thread reaches alike (``threads``:
    the variables of the thread loops around it)."""
    match stmt:
        case n.SeqStmt():
            plan.slots[id(stmt)] = set(range(len(stmt.stmts) + 1))
            for child in stmt.stmts:
                _fill(child, plan, extents, threads)
        case n.For() if stmt.kind in AXES:
            if isinstance(stmt.extent, n.IntImm) and stmt.extent.value == extents[stmt.kind]:
                _fill(stmt.body, plan, extents, threads | {stmt.var})
        case n.For():
            if not isinstance(stmt.body, n.SeqStmt):
                plan.slots[id(stmt)] = {0, 1}
            _fill(stmt.body, plan, extents, threads)
        case n.IfThenElse():
            if not any(x in threads for x in walk(stmt.condition) if isinstance(x, n.Var)):
                for branch in (stmt.then_case, stmt.else_case):
                    if branch is not None:
                        _fill(branch, plan, extents, threads)
        case n.Block() | n.Allocate() | n.LetStmt():
            _fill(stmt.body, plan, extents, threads)
