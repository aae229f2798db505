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

With ``gathers=True`` (:func:`program_text`) some phases gather through an index
buffer ``X`` (``R[...] = S[X[...]]``, a may-dependence on every element of ``S``) or
scatter (``R[X[...]] = ...``), and :func:`verdict` checks with a few actual
arrays ``X`` (:data:`X_VALUES`; each barrier shown needed with those or with a
constant ``X``, :data:`NEEDED_X`) and, for a refusal, with those arrays: one must
make the evidence's two threads touch its element.  Some gathered indices are
clipped (``T.min(T.max(X[...], 2), 9)``) or confined to a thread's segment
(``T.floormod(X[...], 4) + 4 * T.floordiv(tx, 2)``), ranges isl narrows.

``"unsound"`` and ``"bad evidence"`` are bugs.  ``"redundant"`` is a barrier
too many, which costs time only; one is known: where every statement of a
sequence is under a condition, the plan does not count on that sequence's
barrier at the iterations (and blocks) where none of them runs, though the
barrier runs there (:mod:`analyses.gpu_barrier_order` under-approximates
where a barrier runs, so as never to count one that does not), and may add
another (random kernel 13142).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from gpu_enumeration import accesses, check_by_enumeration, holding, parameter_env

import polypad as pp
from analyses import Refuted
from analyses.gpu_sync import BarrierPlan, plan_barriers
from analyses.gpu_threads import AXES, structure
from polypad.errors import NotAffineError
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


def program_text(seed: int, gathers: bool = False) -> str:
    """A random kernel in polypad's script syntax (deterministic in ``seed``); with
    ``gathers``, some phases gather or scatter through ``X`` (module docstring)."""
    return _Maker(random.Random(seed), gathers).text()


class _Maker:
    """One random kernel: one or two blocks of 8 threads, as 8 on ``threadIdx.x`` or
    4 x 2 on ``threadIdx.x`` and ``threadIdx.y``; at times a global scratch buffer
    ``G`` beside the shared ones; a local buffer ``L`` (each thread its own), which
    the serial program shares, so that a value through it from one thread to
    another must be refused."""

    def __init__(self, rng: random.Random, gathers: bool = False):
        self.rng = rng
        self.gathers = gathers
        self.blocks = rng.choice([1, 2])
        self.two_d = rng.random() < 0.3
        self.scratch = rng.random() < 0.3
        # A scalar n: serial loops over range(n), conditions on it in the block (uniform)
        # and against the thread (not).
        self.param = rng.random() < 0.35
        # The thread's index within the block, and the loops that bind it.
        self.thread = "ty * 4 + tx" if self.two_d else "tx"

    def threads(self, pad: str, narrow: bool = False) -> tuple[list[str], str]:
        """The thread loops (all the block's threads, or half of them), and the
        indentation inside."""
        if self.two_d:
            ys = 1 if narrow else 2
            loops = [f'{pad}for ty in T.thread_binding({ys}, thread="threadIdx.y"):',
                     f'{pad}    for tx in T.thread_binding(4, thread="threadIdx.x"):']
            return loops, pad + "        "
        extent = THREADS // 2 if narrow else THREADS
        loop = f'{pad}for tx in T.thread_binding({extent}, thread="threadIdx.x"):'
        return [loop], pad + "    "

    def text(self) -> str:
        blocks, t = self.blocks, self.thread
        params = (f'A: T.Buffer(({blocks * SHARED},), "float32"), '
                  f'B: T.Buffer(({blocks * THREADS},), "float32")')
        if self.param:
            params += ", n: T.int32"
        if self.gathers:
            params += f', X: T.Buffer(({SHARED},), "int32")'
        lines = ["@T.prim_func", f"def rand({params}):"]
        if self.scratch:  # in global memory: the host allocates it, shared by the blocks
            lines.append(f'    G = T.alloc_buffer(({blocks * SHARED},), "float32")')
        loops, inner = self.threads("        ")
        lines += [
            f'    for bx in T.thread_binding({blocks}, thread="blockIdx.x"):',
            f'        S = T.alloc_buffer(({SHARED},), "float32", scope="shared")',
            f'        R = T.alloc_buffer(({SHARED},), "float32", scope="shared")',
            '        L = T.alloc_buffer((2,), "float32", scope="local")',
            *loops,
            f"{inner}for k in range({SHARED // THREADS}):",
            f"{inner}    S[k * {THREADS} + {t}] = A[bx * {SHARED} + k * {THREADS} + {t}]",
        ]
        for _ in range(self.rng.randint(1, 3)):
            lines += self.phase(depth=2, counters=[])
        loops, inner = self.threads("        ")
        lines += [*loops, f"{inner}B[bx * {THREADS} + {t}] = S[{self.index([t])}] + "
                          f"R[{self.index([t])}]"]
        return "\n".join(lines) + "\n"

    def index(self, names: list[str]) -> str:
        """An index into 16 elements: affine in ``names`` (the thread's index first), taken
        modulo 16 where it may leave them."""
        rng, t = self.rng, names[0]
        terms = [f"{rng.choice([1, 1, 2, 3])} * ({name})" for name in names
                 if name == t or rng.random() < 0.7]
        constant = rng.randint(0, SHARED - 1)
        if rng.random() < 0.25:
            return f"{SHARED - 1} - ({t})" if rng.random() < 0.5 else \
                f"T.floordiv({t}, 2) + {constant // 2}"
        return f"T.floormod({' + '.join([*terms, str(constant)])}, {SHARED})"

    def phase(self, depth: int, counters: list[str]) -> list[str]:
        rng, pad, t = self.rng, "    " * depth, self.thread
        if self.gathers and rng.random() < 0.4:
            return self.gather(pad, [t, *counters])
        kind = rng.choices(["threads", "serial", "block if", "counter if", "inner serial",
                            "global", "local"],
                           [5, 2, 1, 1, 2, 1 if self.blocks > 1 else 0, 1])[0]
        if kind == "serial" and len(counters) < 2:
            name = f"k{depth}"
            body = []
            for _ in range(rng.randint(1, 2)):
                body += self.phase(depth + 1, [*counters, name])
            extent = "n" if self.param and rng.random() < 0.5 else "2"
            return [f"{pad}for {name} in range({extent}):", *body]
        if kind == "block if" and (self.blocks > 1 or self.param):
            cond = (f"n > {rng.randint(0, 2)}" if self.param and
                    (self.blocks == 1 or rng.random() < 0.5)
                    else f"bx == {rng.randint(0, self.blocks - 1)}")
            return [f"{pad}if {cond}:",
                    *self.phase(depth + 1, counters)]
        if kind == "counter if" and counters:  # uniform in the block, varies in time
            out = [f"{pad}if {rng.choice(counters)} == {rng.randint(0, 1)}:",
                   *self.phase(depth + 1, counters)]
            if rng.random() < 0.5:
                out += [f"{pad}else:", *self.phase(depth + 1, counters)]
            return out
        if kind == "local":  # through a thread's own registers: private, no barrier
            loops, inner = self.threads(pad)
            index = rng.choice(["0", "1", "T.floormod(tx, 2)"])
            return [*loops, f"{inner}L[{index}] = S[{self.index([t, *counters])}]",
                    f"{inner}R[{self.index([t, *counters])}] = L[{index}] + L[1 - {index}]"
                    if rng.random() < 0.3 else
                    f"{inner}R[{self.index([t, *counters])}] = L[{index}] + A[{t}]"]
        if kind == "global":  # every block writes the same elements of B
            loops, inner = self.threads(pad)
            return [*loops, f"{inner}B[{t}] = A[{t}]"]
        loops, inner = self.threads(pad, narrow=rng.random() < 0.3)
        names = [t, *counters]
        if kind == "inner serial":
            loops.append(f"{inner}for j in range(2):")
            inner += "    "
            names.append("j")
        if rng.random() < 0.3:
            bound = "n" if self.param and rng.random() < 0.4 else rng.randint(1, 4)
            loops.append(f"{inner}if tx < {bound}:")
            inner += "    "
        # Mostly from one shared buffer into the other (a value between phases); at
        # times into the buffer read (a value between threads of one phase); at times
        # through the global scratch, within the block's part or not.
        names_of = ["S", "R", "G"] if self.scratch else ["S", "R"]
        target, origin = rng.sample(names_of, 2)
        if rng.random() < 0.2:
            origin = target
        write = self.at(target, self.index(names))
        read = self.at(origin, self.index(names))
        source = f"{read} + " if rng.random() < 0.8 else ""
        return [*loops, f"{inner}{write} = {source}A[bx * {SHARED} + {t}]"]

    def gather(self, pad: str, names: list[str]) -> list[str]:
        """A phase through ``X``: a gather from a shared buffer (at times the one
        written), a scatter into one, or a gather from the input."""
        rng, t = self.rng, self.thread
        loops, inner = self.threads(pad, narrow=rng.random() < 0.3)
        target, origin = rng.sample(["S", "R"], 2)
        if rng.random() < 0.2:
            origin = target
        x = f"X[{self.index(names)}]"
        if rng.random() < 0.4:  # a range isl can narrow: a clip, or a thread's segment
            x = rng.choice([f"T.min(T.max({x}, 2), 9)", f"T.floormod({x}, 4) + 4 * "
                            f"T.floordiv({t}, {rng.choice([2, 4])})"])
        kind = rng.choice(["gather", "gather", "scatter", "input"])
        if kind == "scatter":
            line = f"{target}[{x}] = {origin}[{self.index(names)}] + A[bx * {SHARED} + {t}]"
        elif kind == "input":
            line = f"{target}[{self.index(names)}] = A[bx * {SHARED} + {x}]"
        else:
            line = f"{target}[{self.index(names)}] = {origin}[{x}] + A[bx * {SHARED} + {t}]"
        return [*loops, f"{inner}{line}"]

    def at(self, buffer: str, index: str) -> str:
        if buffer == "G" and self.rng.random() < 0.8:
            return f"G[bx * {SHARED} + {index}]"
        return f"{buffer}[{index}]"


def parse(seed: int) -> n.PrimFunc:
    """The kernel of ``seed``, parsed."""
    return pp.parse(program_text(seed))


#: The values of the parameter ``n`` a plan is checked at: up to past the 8 threads
#: ``tx < n`` compares against, and 2 and more iterations of ``range(n)``.
N_VALUES = (0, 1, 2, 3, 5, 8, 9)


#: The index arrays ``X`` a plan of a kernel with gathers is checked with: random ones,
#: and one constant (every gathered access on one element).
X_VALUES = (*(np.random.default_rng(seed).integers(0, SHARED, SHARED).astype("int32")
              for seed in range(3)), np.full(SHARED, 5, "int32"))
#: Those a barrier of such a plan is shown needed with: a barrier for a may-dependence
#: may be needed only where every gathered access reads one element.
NEEDED_X = (*X_VALUES, *(np.full(SHARED, c, "int32") for c in range(SHARED)))


def verdict(func: n.PrimFunc) -> Verdict:
    """polypad's barrier plan for ``func``, checked by enumeration (module docstring) at
    every value of :data:`N_VALUES` where the kernel has the parameter ``n``, and with
    every array of :data:`X_VALUES` where it has the index buffer ``X``."""
    has_n = any(isinstance(p, n.Var) and p.name == "n" for p in func.params)
    values = [{"n": v} for v in N_VALUES] if has_n else [{}]
    needed = values
    if any(isinstance(p, n.Buffer) and p.name == "X" for p in func.params):
        values = [{**v, "X": x} for v in values for x in X_VALUES]
        needed = [{**v, "X": x} for v in needed for x in NEEDED_X]
    try:
        found = plan_barriers(func)
    except NotAffineError as error:  # an index that may wrap where n is large: honest
        found = error
    if isinstance(found, BarrierPlan):
        failed = _fails(func, found, values)
        if failed:
            return Verdict("plan", "unsound", failed)
        for key, slots in found.slots.items():
            for slot in sorted(slots):
                fewer = BarrierPlan(found.structure, {k: set(v) for k, v in found.slots.items()})
                fewer.slots[key].discard(slot)
                if not _fails(func, fewer, needed):
                    return Verdict("plan", "redundant", f"slot {slot} of container {key}")
        return Verdict("plan", None)
    if isinstance(found, NotAffineError):
        return Verdict("not affine", None)
    assert isinstance(found, Refuted)
    cex = found.counterexample
    # The evidence's values of the parameters; where it leaves n free, any value will do.
    given = {name: int(v) for name, v in (cex.params or {}).items()}
    points = [given] if "n" in given or not has_n else [{**given, **v} for v in values]
    if "is read from memory" in cex.description:  # a may-race: some X names the element
        points = [{**p, "X": x} for p in points for x in NEEDED_X]
    elif values[0].get("X") is not None:
        points = [{**p, "X": x} for p in points for x in X_VALUES]
    # Where the evidence holds (for a may-race, with some X), some X must leave every
    # placement of barriers unordered: one with the evidence's pair orderable may not.
    held = [p for p in points if _evidence_holds(func, cex, p)]
    if not held:
        return Verdict("refused", "bad evidence", cex.description)
    if _fails(func, _every_uniform_slot(func), held):
        return Verdict("refused", None)
    return Verdict("refused", "over-refused", cex.description)


def _fails(func: n.PrimFunc, plan: BarrierPlan, values: list[dict]) -> str:
    """The enumeration's complaint about ``plan`` at the first of ``values`` where it has
    one; empty where it has none."""
    for params in values:
        params = dict(params)
        memory = {"X": params.pop("X")} if "X" in params else None
        try:
            check_by_enumeration(func, plan=plan, params=params, memory=memory)
        except AssertionError as error:
            return f"{params}: {error}"
    return ""


def _thread_of(text: str) -> tuple:
    """``"block (0, 0, 0) thread (3, 0, 0)"`` as (0, 0, 0, 3, 0, 0), the enumeration's
    thread (indices in the order of ``AXES``)."""
    digits = [int(x) for x in text.replace("(", " ").replace(")", " ").replace(",", " ").split()
              if x.lstrip("-").isdigit()]
    return tuple(digits)


def _evidence_holds(func: n.PrimFunc, cex, params: dict) -> bool:
    """Both threads the counterexample names touch its element, one of them writing, at
    its values of the parameters ``params``."""
    first, second = (_thread_of(cex.values[k]) for k in ("first thread", "second thread"))
    plan = BarrierPlan(structure(func))
    params = dict(params)
    memory = {"X": params.pop("X")} if "X" in params else None
    env = parameter_env(func, params)
    kinds = {first: set(), second: set()}
    for launch in plan.structure.launches:
        for thread in (first, second):
            found: list = []
            with holding(memory):
                accesses(launch.root, env, found, plan, thread, launch, [0])
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
