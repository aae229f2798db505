"""Schedule primitives: compute location -- ``compute_at`` and ``reverse_compute_at``.

A block is moved under a loop of another block's nest and computes there,
at each iteration, only what that iteration needs (``compute_at``, a
producer moved into its consumer) or what it completed
(``reverse_compute_at``, a consumer moved into its producer).  Regions are
exact (ISL) and may overlap: a stencil's producer is computed again where
neighbouring iterations share inputs.  Loops are named as
:func:`polypad.ir.loop_names.loop_names` names them.  Each primitive proves
the move keeps every dependence and refuses otherwise with an
:class:`~polypad.errors.IllegalTransformError` whose ``evidence`` names the
instances and the element (:mod:`.location_legality`; the rewrites are
:mod:`.compute_at`, :mod:`.reverse_compute_at` and :mod:`.store_at`).

Caches placed at a loop are the ``at=`` option of ``cache_read`` and
``cache_write`` (:mod:`.cache_at`): a tile of the buffer allocated in the
loop, e.g. a register tile of a matmul's ``C`` under its ``io``/``jo`` loops.

Blocks inside loops: ``cache_read``/``cache_write`` (at the root or at a
loop), ``transform_layout``, the overcompute primitives, ``distribute`` and
``reorder_by_map`` (which hold the enclosing loops fixed and reorder only
within the block) accept them, and the moved block's target may be any loop.
The block moved by ``compute_at``/``reverse_compute_at`` must have its own
loop nest at the function's top level.
"""

from __future__ import annotations

from .compute_at import compute_at as compute_at_rewrite
from .reverse_compute_at import reverse_compute_at as reverse_compute_at_rewrite
from .state import primitive
from .store_at import store_at as store_at_rewrite


class LocationPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    @primitive
    def compute_at(self, block: str, loop: str):
        """Compute producer ``block`` inside consumer ``loop``, each iteration only the
        region that iteration reads (overlapping where a stencil needs it).

        Before::

            for i in T.serial(18):
                with T.block("B"):
                    B[i] = A[i] * T.float32(2)
            for io, ii in T.grid(4, 4):
                with T.block("C"):
                    C[4 * io + ii] = B[4 * io + ii] + B[4 * io + ii + 1] + B[4 * io + ii + 2]

        ``sch.compute_at("B", "io")``::

            for io in T.serial(4):
                with T.block("B"):
                    for i in T.serial(4 * io, 4 * io + 6):
                        B[i] = A[i] * T.float32(2)
                for ii in T.serial(4):
                    with T.block("C"):
                        C[4 * io + ii] = B[4 * io + ii] + ...
        """
        return compute_at_rewrite(self.func, block, loop)

    @primitive
    def reverse_compute_at(self, block: str, loop: str):
        """Compute consumer ``block`` inside producer ``loop``: at the end of each
        iteration, the instances whose inputs that iteration completed.

        Before::

            for io, ii in T.grid(4, 4):
                with T.block("B"):
                    B[4 * io + ii] = A[4 * io + ii] * T.float32(2)
            for i in T.serial(16):
                with T.block("C"):
                    C[i] = B[i] * T.float32(3)

        ``sch.reverse_compute_at("C", "io")``::

            for io in T.serial(4):
                for ii in T.serial(4):
                    with T.block("B"):
                        B[4 * io + ii] = A[4 * io + ii] * T.float32(2)
                with T.block("C"):
                    for i in T.serial(4 * io, 4 * io + 4):
                        C[i] = B[i] * T.float32(3)
        """
        return reverse_compute_at_rewrite(self.func, block, loop)

    @primitive
    def store_at(self, buffer: str, loop: str):
        """Allocate intermediate ``buffer`` inside ``loop``, shaped as the box one
        iteration touches (Halide's ``store_at``); returns the new shape.

        Legal where ``buffer`` is allocated by the function, every access to it
        is inside ``loop``, and no value flows through it from one iteration of
        the loop to another (:mod:`.store_at`).  After ``compute_at`` this
        turns a producer's full-size buffer into a tile, which the Numba
        target keeps on the stack.

        Before::

            B = T.alloc_buffer((16,), "float32")
            for io in T.serial(4):
                for i in T.serial(4 * io, 4 * io + 4):
                    B[i] = A[i] * T.float32(2)
                for ii in T.serial(4):
                    C[4 * io + ii] = B[4 * io + ii] + T.float32(1)

        ``sch.store_at("B", "io")`` returns ``(4,)``::

            for io in T.serial(4):
                B = T.alloc_buffer((4,), "float32")
                for i in T.serial(4 * io, 4 * io + 4):
                    B[i - 4 * io] = A[i] * T.float32(2)
                for ii in T.serial(4):
                    C[4 * io + ii] = B[ii] + T.float32(1)

        A read of an element written in an earlier iteration is refused with an
        :class:`~polypad.errors.IllegalTransformError` naming both instances.
        """
        return store_at_rewrite(self.func, buffer, loop)
