"""The rewrite behind ``parallel``, ``vectorize`` and ``unroll``: a loop's kind.

The kind is a claim about the order of the loop's iterations
(``T.parallel``: any order, ``T.vectorized``: in lanes, ``T.unroll``: written
out in order); the statements do not change.  Whether the claim holds is
:mod:`.legality`'s question (``check_independent_iterations``,
``check_vectorize``); this module only records it::

    for i in T.serial(8):        ->      for i in T.parallel(8):
        B[i] = A[i] * 2                      B[i] = A[i] * 2
"""

from __future__ import annotations

import dataclasses

from polypad.ir import nodes as n
from polypad.ir.locate import replace


def with_kind(func: n.PrimFunc, node: n.For, kind: n.ForKind) -> n.PrimFunc:
    """``func`` with the loop ``node`` of ``kind``."""
    return replace(func, node, dataclasses.replace(node, kind=kind))
