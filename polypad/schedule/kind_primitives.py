"""Schedule primitives: loop kinds and reductions — ``parallel``, ``vectorize``,
``unroll``, ``rfactor``, ``decompose_reduction``.

Loops are named as :mod:`polypad.ir.loop_names` names them (the variable's
name where unique, else ``block/var`` or ``var#k``), passed as the handles
the primitives return (:class:`~polypad.ir.loop_names.LoopRef`, which find
their loop after other loops are renamed), or as ``For`` nodes.  The kinds
print as TVMScript does (``T.parallel``, ``T.vectorized``, ``T.unroll``) and
the Numba target runs them (:mod:`codegen.numba.emit`: ``numba.prange``, a
fast-math helper, the body written out per iteration).

``parallel`` and ``vectorize`` let the iterations of a loop run in any
order, so each is refused where the loop carries a dependence
(:mod:`analyses.loop_carried`, asked by :mod:`.legality`):
:class:`~polypad.errors.IllegalTransformError` whose
``evidence`` holds the two instances (with their iteration values) and the
element, and whose message names the primitive that would make the step
legal.  A reduction ``B[i] = B[i] + A[i, k]`` carries one over ``k``: a
float sum runs in parallel or in lanes over ``k`` only after an explicit
``rfactor``, which is where the user accepts reassociating it;
``reorder_by_map`` and ``sequential_buffer_access`` accept it with
``reassociate=True`` (:mod:`analyses.reductions`).  An exact reduction
(integers, with any combiner) gives the same bits in any order, so
``vectorize`` runs it in lanes as it is (``parallel`` would race on the
element).  Reductions may use any combiner of :mod:`analyses.combiners`.
``unroll`` keeps the order and is always legal.
"""
from __future__ import annotations

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block, find_loop
from polypad.ir.loop_names import loop_name, loop_ref
from polypad.ir.show import show

from .decompose import decompose
from .legality import check_independent_iterations, check_vectorize
from .loop_kinds import with_kind
from .rfactor import rfactor as rfactor_rewrite
from .state import primitive
from .update_lets import asked_as_stores


class KindPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    @primitive
    def parallel(self, loop: str | n.For):
        """Run the iterations of ``loop`` in parallel (``T.parallel``; ``numba.prange``).

        Refused where ``loop`` carries a dependence: two iterations touch one
        element and one of them writes it.

        Before::

            for i, k in T.grid(8, 16):
                B[i] = B[i] + A[i, k]

        ``sch.parallel("i")``::

            for i in T.parallel(8):
                for k in T.serial(16):
                    B[i] = B[i] + A[i, k]

        ``sch.parallel("k")`` raises IllegalTransformError: ``S0(i=0, k=0)``
        writes ``B[0]``, which ``S0(i=0, k=1)`` reads.
        """
        func = self.func
        node = find_loop(func, loop)
        with asked_as_stores(func, [node]) as (seen, [[inside]]):  # TVM's argmin let form
            check_independent_iterations(seen, inside, "parallel")
        return with_kind(func, node, n.ForKind.PARALLEL)

    @primitive
    def vectorize(self, loop: str | n.For):
        """Run the iterations of ``loop`` in vector lanes (``T.vectorized``).

        Like ``parallel``, refused where ``loop`` carries a dependence, except
        the updates of one element by an exact reduction (integers, with any
        combiner), which may swap: an int8 dot product vectorizes along its axis
        as it is.  A float sum along the loop is vectorized through
        :meth:`rfactor` first.

        A loop *around* a reduction (max-pool's channels around its window)
        vectorizes: each lane reduces its own element.  The Numba target moves
        the lanes below the loops inside
        (:func:`polypad.semantics.vector_lanes.lanes_innermost`), so LLVM
        vectorizes the innermost loop and each lane keeps its order.  Where
        the lanes cannot move below a loop (its bounds, a guard or a let use
        the counter) and that loop carries a floating-point reduction, the
        step is refused: under ``codegen.build(f, fastmath="full")`` the loop
        is compiled with fast-math, which could reassociate it.

        Before::

            for i, j in T.grid(8, 4):
                B[i, j] = A[i, j] * 2

        ``sch.vectorize("j")``::

            for i in T.serial(8):
                for j in T.vectorized(4):
                    B[i, j] = A[i, j] * 2
        """
        func = self.func
        node = find_loop(func, loop)
        with asked_as_stores(func, [node]) as (seen, [[inside]]):  # TVM's argmin let form
            check_vectorize(seen, inside)
        return with_kind(func, node, n.ForKind.VECTORIZED)

    @primitive
    def unroll(self, loop: str | n.For):
        """Write ``loop`` out once per iteration (``T.unroll``).

        Always legal: the iterations keep their order.  The extent must be a
        constant (the Numba target writes out constant-bound loops of up to
        :data:`codegen.numba.loops.MAX_UNROLL` iterations and keeps longer ones).

        Before::

            for k in T.serial(3):
                B[0] = B[0] + A[k]

        ``sch.unroll("k")``::

            for k in T.unroll(3):
                B[0] = B[0] + A[k]
        """
        func = self.func
        node = find_loop(func, loop)
        if not isinstance(node.extent, n.IntImm):
            raise PolypadError(f"unroll: the loop over {loop_name(func, node)} has the "
                               f"extent {show(node.extent)}, not a constant; split it by a "
                               "constant factor and unroll the inner loop")
        return with_kind(func, node, n.ForKind.UNROLL)

    @primitive
    def rfactor(self, loop: str | n.For, factor_axis: int = 0):
        """Factor the reduction over ``loop`` out into a buffer of partial results.

        The loop nest of one reduction ``X[idx] = combine(X[idx], e)``, for
        any combiner of :mod:`analyses.combiners` (``+``, ``*``, ``max``,
        ``min``, and ``&``, ``|``, ``^`` on integers, as TVM writes them), is
        rewritten into three: an init of the partial results to the
        combiner's identity (``-inf`` for a float max), the reduction itself
        into ``X_rf``, whose axes are ``loop`` (at ``factor_axis``) and the
        nest's loops that index ``X``, and a write-back combining the partial
        results into ``X``, in the form the update was written.  In the
        middle nest, ``loop`` carries no dependence any more, so it can be
        parallelized or vectorized.  A ``T.init()`` in the nest is moved out
        before it first (checked as :meth:`decompose_reduction` is; an
        argmax's, both of its stores).  Returns
        the :class:`~.rfactor.Factored` name of the new buffer and the
        handles of the new loops (they outlast later steps on other loops).

        The nest is the loops (and ifs, blocks) around the store that hold
        nothing else.  The init and the write-back run over the loops that
        index ``X_rf``, under the conjuncts of its guards that mention no other
        reduction loop; a write-back that would then leave ``X``'s bounds is
        refused (:class:`~polypad.errors.IllegalTransformError` with the
        element), and so is a ``loop`` that indexes ``X`` or holds more than
        the reduction (:class:`~polypad.errors.PolypadError`).

        An argmax or argmin (:class:`analyses.combiners.ArgUpdate`: the
        index store, then the value's ``max``/``min`` update) factors into two
        buffers, ``Factored.buffer`` for the values and
        ``Factored.index_buffer`` for their first indices; exact, and refused
        (:class:`~polypad.errors.IllegalTransformError` with two steps) where
        the stored index does not grow along the loops (:mod:`.rfactor_arg`).

        **This reassociates the reduction**: each partial result sums the
        iterations of one value of ``loop``, and the partial sums are added
        in the order of ``loop``.  Floating-point results may change in the
        last bits.  Calling ``rfactor`` is the user's decision to accept
        that; no other primitive reassociates.

        Before::

            for i, k in T.grid(8, 16):
                B[i] = B[i] + A[i, k]

        ``sch.rfactor("k")``::

            B_rf = T.alloc_buffer((16, 8), "float32")
            for i_init, k_init in T.grid(8, 16):
                B_rf[k_init, i_init] = T.float32(0)
            for i, k in T.grid(8, 16):
                B_rf[k, i] = B_rf[k, i] + A[i, k]
            for i_wb, k_wb in T.grid(8, 16):
                B[i_wb] = B[i_wb] + B_rf[k_wb, i_wb]
        """
        func = self.func
        node = find_loop(func, loop)
        return rfactor_rewrite(func, node, factor_axis, loop_name(func, node))

    @primitive
    def decompose_reduction(self, block: str | None, loop: str | n.For):
        """Move the init of ``block``'s reduction to just before ``loop``; its loops' handles.

        The init is the store of the reduction's identity that the block runs
        first on each element (``B[i] = 0``), under the loops that index it;
        ``loop`` is one of the loops around the update, and the init keeps
        copies of the loops between ``loop`` and it (named ``<var>_init``).
        ``block=None`` looks in the whole function.  Any combiner of
        :mod:`analyses.combiners`; the init is every store of a ``T.init()``
        (an argmax's value and index), or a store with the start of an
        argmax's other buffer beside it.  An init guarded by the first iteration of
        some loops (``if k == 0:``, as TVM's ``T.init`` lowers, or ``vk == 0``
        with ``vk = k_0 * 16 + k_1``: isl proves the guard holds there and
        nowhere else) is copied without those loops and the guard.  Legal where nothing under
        ``loop`` must run before the init; otherwise
        :class:`~polypad.errors.IllegalTransformError` with the two instances
        and the element.

        Before::

            with T.block("sum"):
                for i in T.serial(8):
                    B[i] = T.float32(0)
                    for k in T.serial(16):
                        B[i] = B[i] + A[i, k]

        ``sch.decompose_reduction("sum", "i")`` returns ``["i_init"]``::

            with T.block("sum"):
                for i_init in T.serial(8):
                    B[i_init] = T.float32(0)
                for i in T.serial(8):
                    for k in T.serial(16):
                        B[i] = B[i] + A[i, k]
        """
        func = self.func
        node = find_loop(func, loop)
        region = None if block is None else find_block(func, block)
        new, loops = decompose(func, region, node)
        return new, [loop_ref(new, x) for x in loops]

