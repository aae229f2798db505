"""Schedule primitives: loop kinds and reductions — ``parallel``, ``vectorize``,
``unroll``, ``rfactor``, ``decompose_reduction``.

Loops are named as :mod:`polypad.ir.loop_names` names them (the variable's
name where unique, else ``block/var`` or ``var#k``), or passed as ``For``
nodes.  The kinds print as TVMScript does (``T.parallel``,
``T.vectorized``, ``T.unroll``) and the Numba target runs them
(:mod:`codegen.numba.emit`: ``numba.prange``, a fast-math helper, the body
written out per iteration).

``parallel`` and ``vectorize`` let the iterations of a loop run in any
order, so each is refused where the loop carries a dependence
(:mod:`analyses.loop_carried`, asked by :mod:`.legality`):
:class:`~polypad.errors.IllegalTransformError` whose
``evidence`` holds the two instances (with their iteration values) and the
element.  A reduction ``B[i] = B[i] + A[i, k]`` carries one over ``k``: it
runs in parallel or in lanes over ``k`` only after an explicit ``rfactor``,
which is where the user accepts reassociating the sum; ``reorder_by_map``
and ``sequential_buffer_access`` accept it with ``reassociate=True``
(:mod:`analyses.reductions`).  ``unroll`` keeps the order and is always
legal.
"""

from __future__ import annotations

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block, find_loop
from polypad.ir.loop_names import loop_name, loop_ref

from .decompose import decompose
from .legality import check_independent_iterations, check_vectorize
from .loop_kinds import with_kind
from .rfactor import rfactor as rfactor_rewrite
from .state import primitive


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
        check_independent_iterations(func, node, "parallel")
        return with_kind(func, node, n.ForKind.PARALLEL)

    @primitive
    def vectorize(self, loop: str | n.For):
        """Run the iterations of ``loop`` in vector lanes (``T.vectorized``).

        Like ``parallel``, refused where ``loop`` carries a dependence.  Under
        ``codegen.build(f, fastmath="full")`` the Numba target compiles the
        loop in a helper with fast-math, so LLVM may reassociate the
        floating-point arithmetic of the loops inside it too:
        vectorizing a loop around a floating-point reduction (a sum over ``k``
        inside ``i``) is refused as well.  A reduction is vectorized through
        :meth:`rfactor` first.

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
        check_vectorize(func, node)
        return with_kind(func, node, n.ForKind.VECTORIZED)

    @primitive
    def unroll(self, loop: str | n.For):
        """Write ``loop`` out once per iteration (``T.unroll``).

        Always legal: the iterations keep their order.  The extent must be a
        constant (the Numba target writes out constant-bound loops of up to
        :data:`codegen.numba.emit.MAX_UNROLL` iterations and keeps longer ones).

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
                               f"extent {node.extent}, not a constant")
        return with_kind(func, node, n.ForKind.UNROLL)

    @primitive
    def rfactor(self, loop: str | n.For, factor_axis: int = 0):
        """Factor the reduction over ``loop`` out into a buffer of partial results.

        The loop nest of one reduction ``X[idx] = X[idx] + e`` (or ``*``) is
        rewritten into three: an init of the partial results to the
        identity, the reduction itself into ``X_rf``, whose axes are
        ``loop`` (at ``factor_axis``) and the nest's loops that index ``X``,
        and a write-back adding the partial results into ``X``.  In the
        middle nest, ``loop`` carries no dependence any more, so it can be
        parallelized or vectorized.  Returns the :class:`~.rfactor.Factored`
        names of the new buffer and loops.

        The nest is the loops (and ifs, blocks) around the store that hold
        nothing else.  The init and the write-back run over the loops that
        index ``X_rf``, under the conjuncts of its guards that mention no other
        reduction loop; a write-back that would then leave ``X``'s bounds is
        refused (:class:`~polypad.errors.IllegalTransformError` with the
        element), and so is a ``loop`` that indexes ``X`` or holds more than
        the reduction (:class:`~polypad.errors.PolypadError`).

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
        """Move the init of ``block``'s reduction to just before ``loop``; its loop names.

        The init is the store of the reduction's identity that the block runs
        first on each element (``B[i] = 0``), under the loops that index it;
        ``loop`` is one of the loops around the update, and the init keeps
        copies of the loops between ``loop`` and it (named ``<var>_init``).
        ``block=None`` looks in the whole function.  An init guarded by the
        first iteration of a loop (``if k == 0:``, as TVM's ``T.init`` lowers)
        is copied without that loop and guard.  Legal where nothing under
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

