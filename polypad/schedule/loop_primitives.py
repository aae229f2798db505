"""Schedule primitives: loop family — ``distribute``, ``reorder_by_map`` and
``sequential_buffer_access``, built from them.

Statements are named as the evidence of every decider names them
(:func:`analyses.instances.labels`): by their innermost block, ``compute``
when the block holds one statement, else ``compute_0``, ``compute_1``, ...
in program order; ``S0``, ``S1``, ... (the model's names) outside blocks.
``block=None`` means the whole function body.  A block may sit inside
loops: those stay as they are, and the primitives reorder only what runs
inside the block at each of their iterations.  Both primitives prove the
new order keeps every dependence (:func:`analyses.dependences`) and
otherwise raise :class:`~polypad.errors.IllegalTransformError` whose
``evidence`` holds the two instances and the element they share, named so
that they can be passed back to a primitive.
"""

from __future__ import annotations

from polypad.errors import PolypadError

from .reschedule import distribute as distribute_rewrite
from .reschedule import reorder_by_map as reorder_by_map_rewrite
from .sequential import next_step
from .state import primitive


class LoopPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    @primitive
    def distribute(self, block: str | None, statements, new_block: str | None = None,
                   position: str = "before"):
        """Loop fission: move ``statements`` of ``block`` into a new block.

        The new block ``new_block`` goes just ``position`` ("before" or
        "after") ``block`` and holds copies of the loops and ifs around the
        moved statements; ``block`` keeps the rest.  ``statements`` are labels
        (``"compute_0"``) or indices within the block.  With ``block=None``
        (and no ``new_block``) each loop nest of the function body is split
        in place instead, the moved statements' copy just before (after) it.

        Before::

            with T.block("compute"):
                for i in T.serial(14):
                    B[i] = 0                       # compute_0
                    for f in T.serial(3):
                        B[i] = B[i] + F[f] * A[i + f]

        ``sch.distribute("compute", ["compute_0"], "init_compute")``::

            with T.block("init_compute"):
                for i in T.serial(14):
                    B[i] = 0
            with T.block("compute"):
                for i in T.serial(14):
                    for f in T.serial(3):
                        B[i] = B[i] + F[f] * A[i + f]
        """
        return distribute_rewrite(self.func, block, statements, new_block, position)

    @primitive
    def reorder_by_map(self, block: str | None, band: str, names=None, *,
                       reassociate: bool = False):
        """Regenerate the loop nests of ``block`` so they run in ``band``'s order.

        ``band`` is an ISL map from labelled statements to new outer loops,
        ``"{ compute[i] -> [floor(i/4), i mod 4] }"``, named by ``names``.
        Each loop nest holding a mapped statement is rebuilt by ISL's AST
        generator: the band loops outermost, each over the whole range it
        takes, then the statement's original loops that the band does not
        determine (innermost first: ``i + f`` keeps ``f``), in their original
        order; conditions become guards.  A statement with a shorter band runs
        before or after the deeper loops, as in program order.  Statements
        sharing a nest with mapped ones must be mapped too.  In a block inside
        loops, the band takes every loop counter (the enclosing ones too) but
        only the block's loops are rebuilt, at each iteration of the others.

        Before::

            for i in T.serial(14):
                A[i // 4, i % 4] = i

        ``sch.reorder_by_map("compute", "{ compute[i] -> [floor(i/4), i mod 4] }",
        ("io", "ii"))``::

            for io in T.serial(4):
                for ii in T.serial(4):
                    if 4 * io + ii < 14:
                        A[io, ii] = 4 * io + ii

        **Reassociation.**  By default every dependence keeps its order, so a
        reduction ``B[i] = B[i] + v`` adds its terms in program order and
        the result is bitwise the original's.  With ``reassociate=True`` two
        instances of one reduction update (``X[e] = X[e] op v``, ``op`` one of
        ``+ * min max``, ``v`` not reading ``X``) on one element may swap;
        everything else -- the initialisation before the chain, the readers
        after it, any other access of those elements -- keeps its order with
        *every* update (:mod:`analyses.reductions`).  For integers the result
        is bit-exact (``+`` and ``*`` wrap modulo ``2**n``, associatively),
        with any combiner; a float sum or product may differ by rounding (a
        sum of ``n`` terms by up to ``γ(n-1)·Σ|xᵢ|`` from the exact value
        either way), and a float ``min``/``max`` in the sign of a zero result
        (the first of two equal terms is kept) and where a NaN is met.  Before::

            for i in T.serial(4):
                B[i] = 0
                for k in T.serial(8):
                    B[i] = B[i] + A[i, k]

        ``sch.reorder_by_map(None, "{ S0[i] -> [i]; S1[i, k] -> [i, 7 - k] }",
        ("i", "kr"), reassociate=True)``::

            for i in T.serial(4):
                B[i] = 0
                for kr in T.serial(8):
                    B[i] = B[i] + A[i, 7 - kr]

        Without ``reassociate`` it is refused (``S1(i=0, k=0)`` writes
        ``B[0]``, which ``S1(i=0, k=1)`` reads); a band that puts ``S0``
        after some ``S1`` is refused with or without it.
        """
        return reorder_by_map_rewrite(
            self.func, block, band, tuple(names) if names is not None else None,
            reassociate=reassociate)

    @primitive
    def sequential_buffer_access(self, block: str | None, buffer: str, *,
                                 reassociate: bool = False):
        """Rewrite the loops of ``block`` to walk ``buffer``'s layout in order (RFC 0077).

        It applies ``distribute`` (to split out statements that cannot follow
        the buffer's order) and ``reorder_by_map``, each checked as usual; the
        trace records the call as ``sequential_buffer_access``, and a replay
        derives the same steps again.  ``block=None`` works on the whole
        function body.
        Raises :class:`~polypad.errors.IllegalTransformError` when the
        rewrite would break a dependence (RFC 0077's conv1d_cumsum), and then
        leaves the schedule as it was.  ``reassociate=True`` is passed to
        ``reorder_by_map``: a reduction may then combine its terms in the
        buffer's order (RFC 0077's conv1d following its input ``A`` adds each
        ``B[i]``'s terms backwards); for floats the result may differ by
        rounding (see ``reorder_by_map``).  The trace records the option, and
        a replay passes it on again.

        Before (``A`` transformed by ``lambda i: [i // 4, i % 4]``)::

            with T.block("compute"):
                for i in T.serial(14):
                    A[i // 4, i % 4] = i

        ``sch.sequential_buffer_access("compute", "A")``::

            with T.block("compute"):
                for io, ii in T.grid(4, 4):
                    if 4 * io + ii < 14:
                        A[io, ii] = 4 * io + ii
        """
        # All or nothing: a refusal after a distribute leaves the schedule as it was.
        # The steps inside install their results but, nested in this primitive,
        # are not recorded.
        funcs = dict(self._funcs)
        try:
            # At most one distribute before the block, one after it, then the reorder.
            for _ in range(3):
                step = next_step(self.func, block, buffer)
                if step is None:
                    return self.func
                options = {"reassociate": reassociate} if step.primitive == "reorder_by_map" else {}
                getattr(self, step.primitive)(**step.args, **options)
                if step.primitive == "reorder_by_map":
                    return self.func
            raise PolypadError("sequential_buffer_access did not settle")  # pragma: no cover
        except BaseException:
            self._funcs = funcs
            raise
