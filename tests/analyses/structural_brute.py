"""Brute force for the structural deciders' tests: run a function, record its accesses.

:func:`trace` runs a function in the reference executor and records, for
every statement instance in execution order, the elements it reads and
writes.  :func:`brute_dependences` derives flow, anti and output
dependences from that record with the same conventions as
:mod:`analyses.dependences` (an instance reads before it writes; a write
kills earlier reads and writes).  :func:`random_program` is a hypothesis
strategy for small affine loop nests (built by ``tests/fuzz_programs.py``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import islpy as isl
import numpy as np
from fuzz_programs import Draws, structural_program
from hypothesis import strategies as st

from polypad.ir import nodes as n
from polypad.model import extract
from polypad.semantics.interpreter import _Interpreter


@dataclass
class Trace:
    """What one run did: ``instances[k]`` is ``(stmt name, loop values)``; ``reads[k]``
    and ``writes[k]`` the elements ``(buffer name, index)`` that instance touched;
    ``guard_reads`` the elements read by conditions of ``if``s and loop bounds."""

    instances: list = field(default_factory=list)
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    guard_reads: set = field(default_factory=set)


class _Tracer(_Interpreter):
    def __init__(self, func: n.PrimFunc, record: Trace):
        super().__init__(func)
        self.statements = {id(s.stmt): s for s in extract(func).statements}
        self.record = record
        self.in_store = False

    def exec(self, stmt):
        if isinstance(stmt, n.BufferStore):
            s = self.statements[id(stmt)]
            self.record.instances.append(
                (s.name, tuple(int(self.env[v]) for v in s.loop_vars)))
            self.record.reads.append(set())
            self.record.writes.append(set())
            self.in_store = True
            super().exec(stmt)
            self.in_store = False
            return
        super().exec(stmt)

    def index(self, buffer, indices, what):
        index = super().index(buffer, indices, what)
        element = (buffer.name, index)
        if not self.in_store:
            self.record.guard_reads.add(element)
        elif what == "store to":
            self.record.writes[-1].add(element)
        else:
            self.record.reads[-1].add(element)
        return index


def trace(func: n.PrimFunc, args: list) -> Trace:
    """Run ``func`` (no ``T.assume``/``T.undef``) on ``args`` and record every access."""
    record = Trace()
    _Tracer(func, record).run(list(args))
    return record


def brute_dependences(record: Trace) -> dict[str, set]:
    """Flow, anti and output pairs ``(instance, instance)`` and the ``live_out`` writers."""
    deps = {"flow": set(), "anti": set(), "output": set()}
    last_writer: dict = {}
    readers: dict = defaultdict(list)  # element -> instances that read it since its last write
    for k, instance in enumerate(record.instances):
        for e in record.reads[k]:
            if e in last_writer:
                deps["flow"].add((record.instances[last_writer[e]], instance))
        for e in record.writes[k]:
            if e in last_writer:
                deps["output"].add((record.instances[last_writer[e]], instance))
            for r in readers[e]:
                if r != k:
                    deps["anti"].add((record.instances[r], instance))
            last_writer[e] = k
            readers[e] = []
        for e in record.reads[k]:
            readers[e].append(k)
    deps["live_out"] = {(record.instances[k], e) for e, k in last_writer.items()}
    return deps


def pairs(umap: isl.UnionMap) -> set:
    """The instance pairs ``((name, values), (name, values))`` of a finite ``S -> S'`` map."""
    out: set = set()

    def add_map(m: isl.Map) -> None:
        n_in = m.dim(isl.dim_type.in_)
        src, dst = m.get_tuple_name(isl.dim_type.in_), m.get_tuple_name(isl.dim_type.out)

        def add_point(p: isl.Point) -> None:
            total = n_in + m.dim(isl.dim_type.out)
            c = [p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(total)]
            out.add(((src, tuple(c[:n_in])), (dst, tuple(c[n_in:]))))

        m.wrap().foreach_point(add_point)

    umap.foreach_map(add_map)
    return out


def points(s: isl.Set) -> set[tuple[int, ...]]:
    """The points of a finite set, as tuples."""
    out: set = set()
    count = s.dim(isl.dim_type.set)
    s.foreach_point(lambda p: out.add(tuple(
        p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(count))))
    return out


def random_args(func: n.PrimFunc, seed: int, **scalars) -> list:
    """Float buffers with small random integers (exact sums), ``scalars`` for the rest."""
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        if isinstance(p, n.Buffer):
            out.append(rng.integers(-4, 5, size=tuple(p.shape)).astype(p.dtype))
        else:
            out.append(scalars[p.name])
    return out


# ----------------------------------------------------------------- random programs


@st.composite
def random_program(draw, *, same_extent: bool = False, local: bool = False,
                   param: str | None = None, n_loops: int | None = None) -> str:
    """A function of one to three loops (two adjacent ones over ``i`` when ``same_extent``);
    see :func:`fuzz_programs.structural_program`."""
    return structural_program(Draws(draw), same_extent=same_extent, local=local, param=param,
                              n_loops=n_loops)


def removal_changes(func: n.PrimFunc, stmt: n.Stmt, inputs: list[list]) -> list[list]:
    """The inputs on which ``func`` without ``stmt`` ends with other buffers than ``func``.

    Brute force for ``is_no_op``: a statement it proves a no-op must change nothing on
    any input.  Each input is a list of arguments; both functions run on copies.
    """
    from codegen import build
    from polypad.ir.locate import replace

    removed = replace(func, stmt, n.Evaluate(n.IntImm(0)))
    kernels = build(func, target="python"), build(removed, target="python")
    changed = []
    for args in inputs:
        outs = []
        for kernel in kernels:
            copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            kernel(*copies)
            outs.append(copies)
        if any(isinstance(a, np.ndarray) and not np.array_equal(a, b)
               for a, b in zip(*outs, strict=True)):
            changed.append(args)
    return changed
