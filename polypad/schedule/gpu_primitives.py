"""Schedule primitives for GPUs — ``bind``, ``set_scope``, ``set_alignment``,
``tree_reduce``, ``atomic``, ``double_buffer``.

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
from polypad.ir.views import require_unshared
from polypad.ir.visitor import walk

from .double_buffer import double_buffer, stages_of
from .gpu_legality import (
    check_bind,
    check_double_buffer,
    check_gpu,
    check_set_scope,
    check_tree_reduce,
)
from .gpu_reduction import atomic, tree_reduce
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
        ``C[i] = C[i] + A[i, k]`` to ``threadIdx.x`` races on ``C[i]``.  The
        same sum as a block with ``T.init()`` and ``k`` its reduction axis is
        TVM's cross-thread reduction: accepted where the ``cuda`` target builds
        it as atomic updates after the init (a float sum then reassociates), as
        the target decides (docs/cuda.md).
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
        require_unshared(func, old, "set_scope")
        changed = relayout(func, old, dataclasses.replace(old, scope=scope))
        check_set_scope(func, changed, old, scope)
        return changed

    @primitive
    def set_alignment(self, buffer: str | n.Buffer, alignment: int):
        """Start ``buffer``, which the function allocates, at an address that is a
        multiple of ``alignment`` bytes (a power of two, at least its element's size):
        TVM's ``align``.  Nothing else changes, on any target; on a GPU, a shared
        array so aligned lets the compiler load a thread's consecutive elements in
        one instruction (``ld.shared.v4.f32`` where four float32 start on 16 bytes;
        the ``vector`` option of ``polypad.examples.matmul.schedule_cuda``).

        Before::

            A_shared = T.alloc_buffer((8, 128), "float32", scope="shared")

        ``sch.set_alignment("A_shared", 16)``::

            A_shared = T.alloc_buffer((8, 128), "float32", scope="shared", align=16)

        Refused (:class:`~polypad.errors.IllegalTransformError`) for a parameter,
        whose memory the caller allocates,
        (:class:`~polypad.errors.AliasError`) for a buffer that shares its memory
        with a view, and (:class:`~polypad.errors.ArgumentValueError`) for an
        alignment that is not such a power of two.
        """
        from polypad.errors import ArgumentValueError, IllegalTransformError
        from polypad.semantics.values import numpy_dtype

        func = self.func
        old = find_buffer(func, buffer)
        if old in func.params:
            raise IllegalTransformError(f"set_alignment of {old.name}: it is a parameter of the "
                                        "function, allocated by the caller")
        require_unshared(func, old, "set_alignment")
        size = numpy_dtype(old.dtype).itemsize
        if (type(alignment) is not int or alignment < size
                or alignment & (alignment - 1)):
            raise ArgumentValueError(f"set_alignment of {old.name}: {alignment!r} bytes is not a "
                                     f"power of two of at least its element's {size} bytes")
        attrs = tuple((k, v) for k, v in old.tvm_attrs if k != "align") + (("align", alignment),)
        return relayout(func, old, dataclasses.replace(old, tvm_attrs=attrs))

    @primitive
    def tree_reduce(self, loop: str | n.For):
        """Make the combine ``loop`` over ``T`` partial results (``T`` a power of two) a
        tree of ``log2 T`` steps, for a block-level reduction on a GPU.

        Before (``rfactor``'s write-back, ``B_rf`` in shared memory)::

            for k_wb in T.serial(4):
                B[i] = B[i] + B_rf[k_wb]

        ``sch.tree_reduce("k_wb")``::

            for k_wb_s0 in T.serial(2):
                B_rf[k_wb_s0] = B_rf[k_wb_s0] + B_rf[k_wb_s0 + 2]
            for k_wb_s1 in T.serial(1):
                B_rf[k_wb_s1] = B_rf[k_wb_s1] + B_rf[k_wb_s1 + 1]
            B[i] = B[i] + B_rf[0]

        Bind each step's loop to ``threadIdx.x``: the ``cuda`` target puts one
        barrier between two steps, none inside one.  **This reassociates the
        combine**, as ``rfactor`` does (float sums may change in the last bits).
        Refused (:class:`~polypad.errors.IllegalTransformError`) where the
        partial results are a parameter or are read after the loop, and
        (:class:`~polypad.errors.PolypadError`) for a loop that is not such a
        combine.
        """
        func = self.func
        node = find_loop(func, loop)
        changed, partial, tree = tree_reduce(func, node)
        name = loop_name(func, node)
        check_tree_reduce(func, changed, partial, tree, name)
        if any(isinstance(x, n.For) and x.kind.value in AXES for x in walk(changed.body)):
            check_gpu(changed, f"tree_reduce of loop {name!r}")
        return changed

    @primitive
    def atomic(self, loop: str | n.For):
        """Make the one reduction update under ``loop`` an atomic read-modify-write on a
        GPU (``cuda.atomic.add``, ``max``, ``min``, ``and_``, ``or_``, ``xor``), so that
        ``loop`` may be bound to threads or blocks although each iteration updates one
        element.

        Before::

            for k in T.thread_binding(64, thread="threadIdx.x"):  # refused: races on B[i]
                B[i] = B[i] + B_rf[k]

        ``sch.atomic("k")`` wraps the store in a block ``B_atomic`` annotated
        ``{"atomic": "+"}``; the CPU targets run it as before.  numba.cuda has
        ``+`` on int32, float32 and float64, ``max``/``min`` on int32, int64,
        uint32, uint64, float32 and float64 (NaN is treated as missing), and
        ``&``, ``|``, ``^`` on the four integer types; anything else is refused
        (:class:`~polypad.errors.PolypadError`).  **A float sum is
        reassociated** (the order of the updates is the hardware's).  Every
        other access to the element must still be ordered (the init before, the
        reads after): where loops are bound, a race the atomics do not cover is
        refused (:class:`~polypad.errors.IllegalTransformError`).
        """
        func = self.func
        node = find_loop(func, loop)
        changed = atomic(func, node)
        if any(isinstance(x, n.For) and x.kind.value in AXES for x in walk(changed.body)):
            check_gpu(changed, f"atomic of loop {loop_name(func, node)!r}")
        return changed

    @primitive
    def double_buffer(self, buffer: str | n.Buffer, through_registers: bool = False):
        """Give the shared tile ``buffer``, cached at a loop (``cache_read(...,
        "shared", at=loop)``), two stages (TVM's ``double_buffer_scope``): the tile of
        the loop's first step is loaded before the loop, and each step loads the next
        step's tile into the other half while its readers read the current one.

        Before::

            for k_0 in T.serial(4):
                A_shared = T.alloc_buffer((8, 8), "float32", scope="shared")
                with T.block("A_shared"):
                    ...  A_shared[ax0, ax1] = A[8 * i_0 + ax0, 8 * k_0 + ax1]
                ...  A_shared[i_1, k_1] ...

        ``sch.double_buffer("A_shared")``::

            A_shared = T.alloc_buffer((2, 8, 8), "float32", scope="shared")
            with T.block("A_shared_prologue"):
                ...  A_shared[0, ax0, ax1] = A[8 * i_0 + ax0, ax1]
            for k_0 in T.serial(4):
                if k_0 + 1 < 4:
                    with T.block("A_shared"):
                        ...  A_shared[(k_0 + 1) % 2, ax0, ax1] = A[..., 8 * (k_0 + 1) + ax1]
                ...  A_shared[k_0 % 2, i_1, k_1] ...

        On a GPU the ``cuda`` target then places one barrier per step instead of
        two (docs/cuda.md).  ``through_registers=True`` splits the next step's copy:
        its loads into a local buffer first in the step, its stores into the other
        half last, so that the loads are in flight while the step computes
        (:mod:`~polypad.schedule.register_staging`; the copy's loops must have
        constant extents).  Refused (:class:`~polypad.errors.IllegalTransformError`,
        with the instance and the element) where a read of the tile may find no
        write of its own step (two stages would feed it the step before last's), where
        something else in the loop writes what the copy reads, and where the result
        races on a GPU; (:class:`~polypad.errors.PolypadError`) for a buffer that is
        not a shared tile allocated in a serial loop's body and filled there by one
        copy.
        """
        func = self.func
        found = stages_of(func, buffer)
        check_double_buffer(func, found)
        done = double_buffer(func, found, through_registers=through_registers)
        if any(isinstance(x, n.For) and x.kind.value in AXES for x in walk(done.func.body)):
            check_gpu(done.func, f"double_buffer of {done.buffer.name}")
        return done.func
