"""The lanes of a vectorized loop that the ``cuda`` target moves as one wide access.

``for v in T.vectorized(4): B[i, 4 * t + v] = A[i, 4 * t + v] * 2 + 1`` reads
four consecutive floats of ``A`` and writes four of ``B``; CUDA moves each
run with one 16-byte instruction (``ld.global.v4.f32``) where its address is a
multiple of 16 bytes.  :mod:`.batch` writes the lanes out like an unrolled
loop's copies; :func:`wide_runs` finds, among those copies, the runs that may
each be one call of :mod:`.wide` (``load4``, ``store4``; ``load2``/``store2``
for two lanes):

- the run is the ``lanes`` copies of one store at lanes ``0 .. lanes - 1`` of a
  vectorized loop of 2 or 4 iterations, next to each other in the copies (the
  vectorized loop is the innermost written out around the store), whose
  conditions (a partial tile's guard) hold at every lane where they hold at
  lane 0: the run is moved whole, under lane 0's condition, or not at all
  (``j + v < 20`` is such where ``j`` is a multiple of 4);
- an access goes wide where, for every value of the variables (isl, as
  quasi-affine functions; anything else stays scalar), its indices at lane
  ``k`` are those at lane 0 but the last, which is lane 0's plus ``k``, and the
  flat offset of lane 0 (row-major, the buffer's shape) is a multiple of
  ``lanes``; its buffer is a parameter or a buffer the host allocates (the
  call checks that each starts on a multiple of the run's bytes), or a shared
  buffer aligned on a multiple of them (``sch.set_alignment``); the run is 8 or
  16 bytes (2 or 4 float32, 2 float64);
- a load goes wide only if it may move first (:func:`.batch.moved_loads`: no
  copy writes its buffer, and it is in no lazy arm); a store goes wide only if
  no load in it reads a buffer a copy writes, so that computing the lanes'
  values before the one store reads what the lanes one after the other read.

Proved for every value of the variables rather than over the loops' ranges: a
run this misses stays scalar, which is slower but the same.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as ir
from polypad.ir.operators import as_expr
from polypad.ir.substitute import substitute
from polypad.ir.visitor import walk
from polypad.model.affine import (
    AffineSpace,
    condition_set,
    equal_everywhere,
    floor_mod,
    to_pw_aff,
)

from .batch import VECTOR_LANES as LANES
from .batch import Batch, moved_loads


@dataclass
class WideRun:
    """``lanes`` consecutive copies of one store (``first`` is the position of lane 0
    in :attr:`Batch.copies`) and which of its accesses go wide."""

    first: int
    lanes: int
    store: bool = False
    #: The loads of the store that go wide, by ``id`` of the node.
    loads: set[int] = field(default_factory=set)


def wide_runs(found: Batch, aligned, checked) -> list[WideRun]:
    """The runs of ``found``'s copies that go wide (see the module docstring);
    ``aligned(buffer, nbytes)`` says whether ``buffer`` starts on a multiple of
    ``nbytes`` (its scope and what the call checks), ``checked(buffer, indices)``
    whether the access is checked at run time (:mod:`.guards`), which a wide
    access would not be: such an access stays scalar."""
    written = {id(store.buffer) for _, store in found.copies}
    out, claimed = [], set()  # the copies in a run already (nested vectorized loops)
    for loop in found.lanes:
        lanes = loop.extent.value
        k = 0
        while k + lanes <= len(found.copies):
            if claimed & set(range(k, k + lanes)) or _run_at(found, k, loop.var, lanes) is None:
                k += 1
                continue
            constants, store = found.copies[k]
            fixed = {var: ir.IntImm(value, var.dtype) for var, value in constants.items()
                     if var is not loop.var}
            found_run = WideRun(k, lanes)
            found_run.store = (not checked(store.buffer, store.indices)
                               and _wide(store.buffer, store.indices, loop.var, lanes, fixed,
                                         aligned)
                               and not any(isinstance(x, ir.BufferLoad)
                                           and id(x.buffer) in written
                                           for part in (store.value, *store.indices)
                                           for x in walk(part)))
            for x in moved_loads(store, written):
                if not checked(x.buffer, x.indices) \
                        and _wide(x.buffer, x.indices, loop.var, lanes, fixed, aligned):
                    found_run.loads.add(id(x))
            if found_run.store or found_run.loads:
                out.append(found_run)
                claimed.update(range(k, k + lanes))
            k += lanes
    return out


def _run_at(found: Batch, k: int, var: ir.Var, lanes: int) -> bool | None:
    """Whether the copies from ``k`` on are lanes ``0 .. lanes - 1`` of one store, with
    the same other counters and conditions that hold at every lane where they hold at
    lane 0 (True), or not (None)."""
    first_constants, store = found.copies[k]
    others = {v: c for v, c in first_constants.items() if v is not var}
    for lane in range(lanes):
        constants, other_store = found.copies[k + lane]
        if (other_store is not store or constants.get(var) != lane
                or {v: c for v, c in constants.items() if v is not var} != others):
            return None
    fixed = {v: ir.IntImm(c, v.dtype) for v, c in others.items()}
    guards = [[substitute(g, {**fixed, var: ir.IntImm(lane, var.dtype)})
               for g in found.guards[k + lane]] for lane in range(lanes)]
    return True if all(_same_condition(guards[0], g) for g in guards[1:]) else None


def _same_condition(first: list, other: list) -> bool:
    """Whether the conjunctions ``first`` and ``other`` hold for the same values of the
    variables (isl; False where either is not quasi-affine)."""
    if len(first) != len(other):
        return False
    if not first:
        return True
    space = AffineSpace()
    try:
        a, b = (functools.reduce(isl.Set.intersect, (condition_set(g, space) for g in c))
                for c in (first, other))
    except PolypadError:
        return False
    return a.is_equal(b)


def _wide(buffer: ir.Buffer, indices, var: ir.Var, lanes: int, fixed: dict,
          aligned) -> bool:
    """Whether the access ``buffer[indices]`` at lanes ``0 .. lanes - 1`` of ``var`` is
    one aligned run (the other written-out counters at their values ``fixed``)."""
    bits = dtypes.bits(buffer.dtype) if not dtypes.is_vector(buffer.dtype) else 0
    nbytes = lanes * bits // 8
    if lanes not in LANES or bits not in (32, 64) or nbytes not in (8, 16) or not indices \
            or not aligned(buffer, nbytes):
        return False
    at = [[substitute(i, {**fixed, var: ir.IntImm(lane, var.dtype)}) for i in indices]
          for lane in range(lanes)]
    try:
        for lane in range(1, lanes):
            *head, last = at[lane]
            if not all(equal_everywhere(a, b) for a, b in zip(head, at[0][:-1])):
                return False
            if not equal_everywhere(last, at[0][-1] + lane):
                return False
        return multiple_of(buffer, at[0], lanes)
    except PolypadError:  # an index of another dtype than the shape's, say: not proved
        return False


def multiple_of(buffer: ir.Buffer, indices: list, lanes: int) -> bool:
    """Whether the row-major offset of ``buffer[indices]`` is a multiple of ``lanes``
    for every value of the variables (isl; False where it is not quasi-affine)."""
    try:
        offset, stride = None, None
        for index, extent in zip(reversed(indices), reversed(buffer.shape)):
            term = index if stride is None else index * stride
            offset = term if offset is None else offset + term
            stride = as_expr(extent) if stride is None else stride * as_expr(extent)
        remainder = floor_mod(to_pw_aff(offset), lanes)
    except PolypadError:  # not quasi-affine (NotAffineError), or of mixed dtypes
        return False
    return isinstance(remainder, isl.PwAff) and remainder.non_zero_set().is_empty()
