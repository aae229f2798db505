"""Where a sequence of a launch runs: the blocks and block times at which every
thread of the block passes a barrier placed in it, decided with isl.

A barrier at slot ``k`` of a sequence runs at every block time ``(p..., k)``
where ``p`` is a prefix at which the sequence runs (:mod:`analyses.gpu_barrier_order`).
The sequence runs, in a block, at the iterations of the serial loops around it
that their bounds allow and where every ``if`` around it takes the branch it is
in: the conditions *around* the sequence, not those of the statements in it.
At ``k2 == 0`` a loop body ``if k2 == 1: ...; cuda.syncthreads()`` runs no
statement before the barrier, yet every thread passes the barrier.

:func:`sequence_runs` computes that set from a statement of the sequence: its
model space, the loops around the sequence (its serial loops on the path, and
the loops bound to GPU axes, which every thread of the block runs alike where
a barrier may go at all) and the ``if`` statements on its path.  Only a barrier every
thread of the block reaches alike is ever placed (:mod:`analyses.gpu_sync`
refuses the others), so a condition on the thread's index around it holds for
all of the block's threads or for none, and the thread indices can be
projected out.  Where a condition around the sequence cannot be read exactly
(not quasi-affine, or it may wrap), the answer is ``None``, and the caller
falls back to where some statement of the sequence runs, which is smaller:
a pair is never counted as ordered by a barrier that may not run.
"""

from __future__ import annotations

import islpy as isl

from polypad.model.affine import to_pw_aff
from polypad.model.domains import statement_domain
from polypad.model.isl_helpers import time_map
from polypad.model.nest import Guard, Leaf

from .gpu_threads import AXES, BLOCK_AXES


def sequence_runs(statement, entries: list, descs: list, level: int) -> isl.Set | None:
    """The set of ``[block indices (3), block time (level)]`` at which the sequence at
    ``level`` of the timeline path (``entries``, ``descs``) of the model statement
    ``statement`` runs, every thread of the block with it; ``None`` where a condition
    around it cannot be read exactly (see the module docstring)."""
    serial = {id(node) for kind, node in descs[:level] if kind == "loop"}
    loops = tuple(loop for loop in statement.loops
                  if loop.kind in AXES or id(loop) in serial)
    guards = tuple(Guard(node.condition, entries[m] == 0)
                   for m, (kind, node) in enumerate(descs[:level]) if kind == "if")
    path = Leaf(statement.stmt, loops, guards, statement.lets, None, ())
    domain, dropped = statement_domain(path, statement.space)
    if dropped:
        return None
    space = statement.space
    bound = {loop.kind: loop for loop in loops if loop.kind in BLOCK_AXES}
    block = [space.var(bound[axis].var).sub(to_pw_aff(bound[axis].min, space))
             if axis in bound else 0 for axis in BLOCK_AXES]
    return time_map(space, block + list(entries[:level]), domain).range()


__all__ = ["sequence_runs"]
