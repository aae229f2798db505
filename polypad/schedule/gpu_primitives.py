"""Schedule primitives for GPUs — ``bind``, ``set_scope``.

``sch.bind(loop, "threadIdx.x")`` binds a loop to one of TVM's GPU axes
(``blockIdx.x/y/z``, ``threadIdx.x/y/z``): it prints as
``T.thread_binding(n, thread="threadIdx.x")``, the CPU targets still run it
as a serial loop, and ``codegen.build(f, target="cuda")`` runs its iterations
on GPU threads (:mod:`codegen.cuda`).  Caches for a GPU are
``cache_read``/``cache_write`` with ``scope="shared"`` or ``"local"`` at a
loop, whose fill loops are then bound to the thread axes like any other
(cooperative loads; docs/cuda.md).

``bind`` is refused where the bound function would race on a GPU
(:mod:`.gpu_legality`, asking :mod:`analyses.gpu_sync`): two blocks, or two
threads of one block that no barrier can order, touching one element with
one writing, or a barrier needed where not every thread of the block
reaches it.  Barriers themselves are not in the IR: the ``cuda`` target puts
them exactly where the same analysis says values flow between threads.
"""

from __future__ import annotations

import dataclasses

from polypad.ir import nodes as n
from polypad.ir.locate import find_buffer, find_loop
from polypad.ir.loop_names import loop_name

from .gpu_legality import check_bind, check_set_scope
from .layout_rewrite import relayout
from .loop_kinds import with_kind
from .state import primitive

#: The axes ``bind`` takes, in TVM's spelling.
AXES = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


class GpuPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    @primitive
    def bind(self, loop: str | n.For, thread: str):
        """Bind ``loop`` to the GPU axis ``thread`` (``T.thread_binding``).

        Before::

            for i in T.serial(64):
                for j in T.serial(64):
                    B[i, j] = A[i, j] * 2

        ``sch.bind("i", "blockIdx.x"); sch.bind("j", "threadIdx.x")``::

            for i in T.thread_binding(64, thread="blockIdx.x"):
                for j in T.thread_binding(64, thread="threadIdx.x"):
                    B[i, j] = A[i, j] * 2

        Refused (:class:`~polypad.errors.IllegalTransformError`, the two
        instances, their threads and the element as evidence) where two
        blocks, or two threads of a block in an order no barrier can keep,
        would touch one element and one of them write it: binding ``k`` of
        ``C[i] = C[i] + A[i, k]`` to ``threadIdx.x`` races on ``C[i]``.
        """
        func = self.func
        node = find_loop(func, loop)
        bound = with_kind(func, node, n.ForKind(thread))
        check_bind(bound, node, loop_name(func, node), thread)
        return bound

    @primitive
    def set_scope(self, buffer: str | n.Buffer, scope: str):
        """Put ``buffer``, which the function allocates, in memory ``scope``:
        ``"global"``, ``"shared"`` (one copy per GPU block) or ``"local"`` (one per
        thread).  Nothing changes on a CPU; on a GPU, ``rfactor``'s partial results
        go to shared memory this way (docs/cuda.md).

        Before::

            B_rf = T.alloc_buffer((4,), "float32")

        ``sch.set_scope("B_rf", "shared")``::

            B_rf = T.alloc_buffer((4,), "float32", scope="shared")

        Refused for a parameter, and, where loops are bound to GPU axes, where
        the new scope makes them race (two blocks sharing a shared buffer's
        element, two threads a local one's).
        """
        func = self.func
        old = find_buffer(func, buffer)
        changed = relayout(func, old, dataclasses.replace(old, scope=scope))
        check_set_scope(func, changed, old, scope)
        return changed
