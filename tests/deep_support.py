"""Programs for ``test_deep_everywhere.py``: each as a long sum and as a deep nest.

Every program comes in two *shapes*:

* ``"sum"``: a store's value is a sum of ``terms`` loads, ``A[i] + A[i] + ...``,
  a left-nested chain ``terms`` levels deep;
* ``"nest"``: the program (with two-term sums) sits inside ``depth - 2``
  further loops, most of extent 1 and every 16th of extent 2, so that its
  own loops are ``depth`` deep.

:func:`collapsed` turns a printed function into one where every run of a
repeated term is a single ``X + ...``: the long sum's result of a pass,
collapsed, must be the short sum's result of the same pass, collapsed.
:func:`update_nest` is one update deep inside loops, for the no-op deciders.
"""

from __future__ import annotations

import functools
import re

import polypad as pp
from polypad.ir import nodes as n

TERMS = 10_000
DEPTH = 64
SHORT = 3  # the terms of the short sum that the long one is compared with


def chain(term: str, terms: int) -> str:
    return " + ".join([term] * terms)


def _main(k: int) -> str:
    # A producer of a long sum and a consumer reading it twice (blocks B and C).
    return f'''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in T.serial(16):
        with T.block("B"):
            B[i] = {chain("A[i]", k)}
    for j in T.serial(16):
        with T.block("C"):
            C[j] = B[j] * T.float32(2)
            C[j] = C[j] + B[j]
'''


def _undef(k: int) -> str:
    # As _main, with a store of T.undef() first (it grants permission to overwrite).
    return _main(k).replace('    for i in T.serial(16):\n',
                            '    B[0] = T.undef()\n    for i in T.serial(16):\n', 1)


def _conditional(k: int) -> str:
    # What simplify decides from the facts (i < 20, n // 8 == 0) and what
    # hoist_expression moves out of its loop (n > 2).
    return f'''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"),
      C: T.Buffer((16,), "float32"), n: T.int32):
    T.assume(0 <= n and n < 8)
    for i in T.serial(16):
        if i < 20:
            B[i] = {chain("A[i]", k)} + T.Cast("float32", n // 8)
    for i in T.serial(16):
        if n > 2:
            C[i] = B[i] * T.float32(2)
'''


def _grid(k: int) -> str:
    return f'''
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("C"):
            C[i, j] = {chain("A[i, j]", k)}
'''


def _reduction(k: int) -> str:
    return f'''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    with T.block("sum"):
        for i in T.serial(8):
            B[i] = T.float32(0)
            for k in T.serial(4):
                B[i] = B[i] + ({chain("A[i, k]", k)})
'''


def _padded(k: int) -> str:
    # RFC 0077's branching over a padded layout: A's padding is assumed to hold 0.
    return f'''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == T.float32(0))
    for io, ii in T.grid(4, 4):
        with T.block("compute"):
            if 4 * io + ii < 14:
                B[io, ii] = {chain("A[io, ii]", k)}
            else:
                B[io, ii] = T.float32(0)
'''


def _overcompute(k: int) -> str:
    # RFC 0077's overcompute: every element computed, the padding then overwritten.
    return f'''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = {chain("A[io, ii]", k)}
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii >= 14:
                B[io, ii] = T.float32(0)
'''


PROGRAMS = {"main": _main, "undef": _undef, "conditional": _conditional, "grid": _grid,
            "reduction": _reduction, "padded": _padded, "overcompute": _overcompute}


def nested(text: str, depth: int) -> str:
    """``text`` with its body (allocations aside) inside ``depth`` loops."""
    head, body = text.split("):\n", 1)
    lines = [line for line in body.splitlines() if line.strip()]
    allocations = [line for line in lines if "alloc_buffer" in line]
    rest = [line for line in lines if "alloc_buffer" not in line]
    out = [head + "):", *allocations, *_loops(depth, 1)]
    out += ["    " * depth + line for line in rest]
    return "\n".join(out) + "\n"


def _loops(depth: int, indent: int) -> list[str]:
    return ["    " * (indent + k) + f"for o{k} in T.serial({2 if k % 16 == 0 else 1}):"
            for k in range(depth)]


def _split_nest(k: int, deep: str) -> str:
    """_main's producer and consumer, one of them (``deep``) inside ``DEPTH - 2`` loops:
    a block may only move (compute_at) from the top level."""
    head, body = _main(k).split("):\n", 1)
    lines = body.splitlines()
    alloc, producer, consumer = lines[0], lines[1:4], lines[4:]
    parts = {"B": producer, "C": consumer}
    out = [head + "):", alloc]
    for name in ("B", "C"):
        if name == deep:
            out += _loops(DEPTH - 2, 1) + ["    " * (DEPTH - 2) + line for line in parts[name]]
        else:
            out += parts[name]
    return "\n".join(out) + "\n"


def text(program: str, shape: str, terms: int = TERMS) -> str:
    """The script text of ``program`` in ``shape`` (``"sum"`` or ``"nest"``)."""
    if program in ("producer_deep", "consumer_deep"):
        return _split_nest(2, "B" if program == "producer_deep" else "C")
    if shape == "sum":
        return PROGRAMS[program](terms)
    return nested(PROGRAMS[program](2), DEPTH - 2)


@functools.cache
def parsed(program: str, shape: str, terms: int = TERMS) -> n.PrimFunc:
    """:func:`text`, parsed once per session (functions are immutable)."""
    return pp.parse(text(program, shape, terms))


_RUN = re.compile(r"([A-Za-z_]\w*\[[^\[\]]*\])(?: \+ \1)+")


def collapsed(script: str) -> str:
    """``script`` with every run ``X + X + ... + X`` of a load ``X`` written ``X + ...``."""
    return _RUN.sub(r"\1 + ...", script)


def update_nest(depth: int = DEPTH) -> n.PrimFunc:
    """One update under ``depth`` loops, of extent 2 every 8 levels and 1 elsewhere:
    it reads what it wrote before, so it is no no-op, and its dataflow spans a
    ``2 * depth + 1``-dimensional time space."""
    lines = ["@T.prim_func",
             'def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):']
    for k in range(depth):
        lines.append("    " * (k + 1) + f"for i{k} in T.serial({2 if k % 8 == 0 else 1}):")
    last = f"i{depth - 1}"
    lines.append("    " * (depth + 1)
                 + f"A[i0 + {last}] = A[i0 + {last}] + B[i{min(8, depth - 1)} + i{depth // 2}]")
    return pp.parse("\n".join(lines) + "\n")
