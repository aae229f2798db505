"""Block-level schedule primitives on a random block nest, checked by execution.

The programs of :mod:`fuzz_blocks` have stages of blocks with spatial and
reduce axes; each entry of :data:`BLOCK_PRIMITIVES` picks a block (by name),
its loops (``get_loops(block)``), a buffer it reads or writes, and applies
one primitive -- or a short chain, such as ``split`` then ``compute_at`` at
the outer loop, or ``split`` of a reduce loop then ``rfactor`` -- to a fresh
:class:`~polypad.schedule.Schedule`.  Each result must give the original's
results on every input set, in the reference executor and in Numba
(:func:`compare_both`).  A :class:`PolypadError` is a legal refusal, unless it
says the IR is ill formed (``fuzz_support.NOT_REFUSALS``: a binding left
outside its domain is a :class:`~polypad.errors.BindingError`, one of them).
"""

from __future__ import annotations

import numpy as np
from fuzz_support import (
    NOT_REFUSALS,
    Case,
    Report,
    _decide,
    _describe,
    compare,
    copies,
    question,
)

import codegen
from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk


def blocks(func: n.PrimFunc) -> list[n.Block]:
    """The blocks with axes, in program order."""
    return [s for s in walk(func.body)
            if isinstance(s, n.Block) and s.header is not None and s.header.axes]


def _reads(block: n.Block) -> list[str]:
    return list(dict.fromkeys(x.buffer.name for x in walk(block.body)
                              if isinstance(x, n.BufferLoad)))


def _writes(block: n.Block) -> list[str]:
    return list(dict.fromkeys(x.buffer.name for x in walk(block.body)
                              if isinstance(x, n.BufferStore)))


def _reduction(block: n.Block) -> bool:
    return any(a.kind == "R" for a in block.header.axes)


def _block(sch, choose, which=None) -> str | None:
    found = [b for b in blocks(sch.func) if which is None or which(b)]
    return choose.choice(found).name if found else None


def _loop_of(sch, choose, block: str) -> str | None:
    loops = sch.get_loops(block)
    return choose.choice(loops) if loops else None


def _pair(sch, choose) -> tuple[str, str] | None:
    """Two blocks, the first earlier in the program; a producer and a consumer of what it
    writes where there is one (the others are refused, mostly)."""
    found = blocks(sch.func)
    pairs = [(a.name, b.name) for k, a in enumerate(found) for b in found[k + 1:]
             if a.name != b.name]
    flowing = [(a, b) for a, b in pairs
               if set(_writes(_named(found, a))) & set(_reads(_named(found, b)))]
    if flowing and choose.integer(0, 3) != 0:
        return choose.choice(flowing)
    return choose.choice(pairs) if pairs else None


def _named(found: list[n.Block], name: str) -> n.Block:
    return next(b for b in found if b.name == name)


# ----------------------------------------------------------------- one primitive each


def _compute_at(sch, choose):
    pair = _pair(sch, choose)
    loop = pair and _loop_of(sch, choose, pair[1])
    if loop is None:
        return None
    sch.compute_at(pair[0], loop)
    return f"compute_at({pair[0]!r}, {loop!r})"


def _reverse_compute_at(sch, choose):
    pair = _pair(sch, choose)
    loop = pair and _loop_of(sch, choose, pair[0])
    if loop is None:
        return None
    sch.reverse_compute_at(pair[1], loop)
    return f"reverse_compute_at({pair[1]!r}, {loop!r})"


def _cache(kind: str):
    def apply(sch, choose):
        block = _block(sch, choose, _reads if kind == "read" else _writes)
        if block is None:
            return None
        found = _named(blocks(sch.func), block)
        buffer = choose.choice(_reads(found) if kind == "read" else _writes(found))
        at = _loop_of(sch, choose, block) if choose.integer(0, 2) == 0 else None
        getattr(sch, f"cache_{kind}")(block, buffer, at=at)
        return f"cache_{kind}({block!r}, {buffer!r}, at={at!r})"

    return apply


def _rfactor(sch, choose):
    block = _block(sch, choose, _reduction)
    loop = block and _loop_of(sch, choose, block)
    if loop is None:
        return None
    sch.rfactor(loop)
    return f"rfactor({loop!r})"


def _decompose(sch, choose):
    block = _block(sch, choose, lambda b: b.header.init)
    loop = block and _loop_of(sch, choose, block)
    if loop is None:
        return None
    sch.decompose_reduction(block, loop)
    return f"decompose_reduction({block!r}, {loop!r})"


def _split(sch, choose):
    block = _block(sch, choose)
    loop = block and _loop_of(sch, choose, block)
    if loop is None:
        return None
    factor, tail = choose.choice([2, 3]), choose.choice(["predicate", "partition", "pad"])
    sch.split(loop, [None, factor], tail=tail)
    return f"split({loop!r}, [None, {factor}], tail={tail!r})"


def _adjacent(sch, choose) -> tuple[str, str] | None:
    block = _block(sch, choose)
    loops = sch.get_loops(block) if block else []
    if len(loops) < 2:
        return None
    k = choose.integer(0, len(loops) - 2)
    return loops[k], loops[k + 1]


def _fuse(sch, choose):
    pair = _adjacent(sch, choose)
    if pair is None:
        return None
    sch.fuse(*pair)
    return f"fuse({pair[0]!r}, {pair[1]!r})"


def _reorder(sch, choose):
    pair = _adjacent(sch, choose)
    if pair is None:
        return None
    sch.reorder(pair[1], pair[0])
    return f"reorder({pair[1]!r}, {pair[0]!r})"


def _tile(sch, choose):
    pair = _adjacent(sch, choose)
    if pair is None:
        return None
    factors = [choose.choice([2, 3]), choose.choice([2, 4])]
    sch.tile(list(pair), factors)
    return f"tile({list(pair)!r}, {factors!r})"


def _store_at(sch, choose):
    allocated = list(dict.fromkeys(s.buffer.name for s in walk(sch.func.body)
                                   if isinstance(s, n.Allocate)))
    loops = sch.get_loops(None)
    if not allocated or not loops:
        return None
    buffer, loop = choose.choice(allocated), choose.choice(loops)
    sch.store_at(buffer, loop)
    return f"store_at({buffer!r}, {loop!r})"


ONE = {
    "compute_at": _compute_at,
    "reverse_compute_at": _reverse_compute_at,
    "cache_read": _cache("read"),
    "cache_write": _cache("write"),
    "rfactor": _rfactor,
    "decompose_reduction": _decompose,
    "split": _split,
    "fuse": _fuse,
    "reorder": _reorder,
    "tile": _tile,
    "store_at": _store_at,
}


# ----------------------------------------------------------------- chains


def _split_then(then: str):
    """Split a block's loop, then apply ``then`` at one of its new loops."""

    def apply(sch, choose):
        block = _block(sch, choose, _reduction if then == "rfactor" else None)
        loop = block and _loop_of(sch, choose, block)
        if loop is None:
            return None
        factor = choose.choice([2, 4])
        outer, inner = sch.split(loop, [None, factor])
        calls = [f"split({loop!r}, [None, {factor}])"]
        if then == "rfactor":
            target = choose.choice([outer, inner])
            sch.rfactor(target)
            return " + ".join([*calls, f"rfactor({target!r})"])
        names = [b.name for b in blocks(sch.func)]
        others = [x for x in names if x != block]
        if not others:
            return None
        other = choose.choice(others)
        kind = "compute_at" if names.index(other) < names.index(block) else "reverse_compute_at"
        getattr(sch, kind)(other, outer)
        return " + ".join([*calls, f"{kind}({other!r}, {outer!r})"])

    return apply


def _random_chain(sch, choose):
    calls = []
    for _ in range(choose.integer(2, 3)):
        name = choose.choice(sorted(ONE))
        call = ONE[name](sch, choose)
        if call is not None:
            calls.append(call)
    return " + ".join(calls) or None


BLOCK_PRIMITIVES = {
    **ONE,
    "split+compute_at": _split_then("compute_at"),
    "split+rfactor": _split_then("rfactor"),
    "chain": _random_chain,
}


# ----------------------------------------------------------------- the check


def compare_both(case: Case, got: n.PrimFunc, what: str, report: Report) -> None:
    """``got`` gives ``case``'s results in the reference executor (``compare``) and in
    Numba; the original runs in Numba too (once per case), so that an executor's
    disagreement is told from a rewrite's."""
    before = len(report.findings)
    compare(case, got, what, report)
    if len(report.findings) > before:
        return
    if id(case) not in _NUMBA_CHECKED:
        _NUMBA_CHECKED.clear()
        _NUMBA_CHECKED.add(id(case))
        if not _numba_matches(case, case.func, "the original", what, report):
            return
    _numba_matches(case, got, "the result", what, report)


_NUMBA_CHECKED: set[int] = set()  # the case whose original ran in Numba already


def _numba_matches(case: Case, func: n.PrimFunc, label: str, what: str,
                   report: Report) -> bool:
    try:
        kernel = codegen.build(func, target="numba")
    except PolypadError as err:
        report.unsound(what, f"{label} cannot be built for Numba: {_describe(err)}")
        return False
    for args, want in zip(case.inputs, case.results, strict=True):
        out = copies(args)
        try:
            kernel(*out)
        except PolypadError as err:
            report.unsound(what, f"{label} fails in Numba: {_describe(err)}")
            return False
        for k, (a, b) in enumerate(zip(want, out, strict=True)):
            if isinstance(a, np.ndarray) and not np.allclose(a, b, rtol=1e-6):
                report.unsound(what, f"{label} in Numba: argument {k} differs: want "
                                     f"{a.tolist()}, got {b.tolist()}")
                return False
    return True


def check_block_primitives(case: Case, report: Report, choose, names=None) -> None:
    """Each block primitive (or those ``names``), with arguments from ``choose``, keeps
    the results in both executors; a :class:`PolypadError` other than ill-formed IR is
    a refusal."""
    from polypad.schedule import Schedule

    for name, apply in BLOCK_PRIMITIVES.items():
        if names is not None and name not in names:
            continue
        sch = Schedule(case.func)
        call = name
        with question(report, name):
            try:
                call = apply(sch, choose)
            except NOT_REFUSALS as err:
                report.crash(_so_far(name, sch), err)
                continue
            except PolypadError as err:
                report.refusal(_so_far(name, sch), err)
                continue
            except Exception as err:
                report.crash(_so_far(name, sch), err)
                continue
        if call is not None:
            report.log.append(f"applied: {call}")
            compare_both(case, sch.func, call, report)


def _so_far(name: str, sch) -> str:
    """``name``, with the calls a chain applied before the one that raised."""
    done = str(sch.trace).strip()
    return f"{name} (after {done})" if len(sch.trace) else name


def check_bindings(case: Case, report: Report) -> None:
    """``check_block_bindings`` of the program the parser accepted refutes nothing (the
    parser asks the same question of the bindings it reads)."""
    import analyses

    decided = _decide(report, "check_block_bindings",
                      lambda: analyses.check_block_bindings(case.func))
    if isinstance(decided, analyses.Refuted):
        report.unsound("check_block_bindings", f"refutes what the parser accepted: {decided}")
