"""Schedule primitives: tiling family — ``get_loops``, ``split``, ``fuse``, ``reorder``, ``tile``.

Loops are named as :mod:`polypad.ir.loop_names` names them: the loop
variable's name where it is unique in the function, else ``block/var`` or
``var#k``.  ``get_loops`` hands out *handles*
(:class:`~polypad.ir.loop_names.LoopRef`: a ``str``, the name, holding the
loop's variable), every primitive here takes them (or names, or ``For``
nodes) and each primitive that makes loops returns the handles of the new
ones.  A handle finds its loop whatever its name has become, as long as the
loop itself is there: it outlasts ``compute_at``, ``fuse``, ``split`` and
``reorder`` of other loops.

``split`` with ``tail="predicate"`` or ``"partition"`` and ``fuse`` keep the
order of every statement instance, so they are always legal.  ``reorder``
changes it and is checked against the function's dependences
(:func:`.legality.check_order`); ``split`` with ``tail="pad"`` runs extra
iterations and is checked by the overcompute prover
(:func:`.split_pad_legality.check_split_pad`, which asks
:func:`analyses.can_remove_conditional` about the guard of the predicate
form).  The rewrites are :mod:`.split` and :mod:`.fuse_reorder`.  A refusal
is an :class:`~polypad.errors.IllegalTransformError` whose ``evidence``
names the statement instances and the element.
"""

from __future__ import annotations

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, enclosing_loops, find_block, find_loop
from polypad.ir.loop_names import LoopRef, loop_names, loop_ref
from polypad.ir.visitor import walk

from .fuse_reorder import chain_of, reorder_schedule
from .fuse_reorder import fuse as fuse_rewrite
from .fuse_reorder import reorder as reorder_rewrite
from .legality import check_order, check_sunk
from .reduction_nest import unshared
from .sink import perfect_nest
from .split import split as split_rewrite
from .split import without_guard
from .split_pad_legality import check_split_pad
from .state import check_references, primitive
from .update_lets import asked_as_stores


class TilingPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    def get_loops(self, block: str | None = None) -> list[str]:
        """The handles of the loops around ``block``'s statements, outermost first.

        The loops outside the ``with T.block`` come first, then those inside
        it, in program order.  ``block=None`` lists every loop of the function.
        Not a primitive: it changes nothing and is not recorded.

        ::

            for n in T.serial(4):
                with T.block("compute"):
                    for i, j in T.grid(8, 8):
                        B[n, i, j] = A[n, i, j]

        ``sch.get_loops("compute")`` is ``["n", "i", "j"]``.  Each is a
        :class:`~polypad.ir.loop_names.LoopRef`, which compares and prints as
        that name and finds its loop after other steps rename it (``compute_at``
        of a block into a loop changes the loop's ``block/var`` name).
        """
        check_references({"block": block}, "Schedule.get_loops")
        func = self.func
        names = {id(loop): LoopRef(name, loop.var) for name, loop in loop_names(func).items()}
        if block is None:
            return list(names.values())
        node = find_block(func, block)
        outside = [names[id(x)] for x in enclosing_loops(func, node)]
        inside = [names[id(x)] for x in walk(node.body) if isinstance(x, n.For)]
        return outside + inside

    @primitive
    def split(self, loop: str | n.For, factors, *, tail: str = "predicate"):
        """Split ``loop`` into a nest of loops of the given ``factors``; their handles.

        ``factors`` lists the new extents outermost first; one of them may be
        ``None``, the rounded-up quotient (it must be the outermost when the
        extent is symbolic).  Where the factors do not divide the extent,
        ``tail`` says what happens to the extra iterations:

        * ``"predicate"``: a guard around the body (TVM);
        * ``"partition"``: whole tiles without a guard, then tail loops
          (named ``<loop>_tail``) for the remainder;
        * ``"pad"``: no guard and no tail: the extra iterations run.  Legal only
          where the overcompute prover shows they change nothing (they write
          padding that is overwritten, or store what is already there);
          otherwise :class:`~polypad.errors.IllegalTransformError` with the
          out-of-bounds or changed element.

        Before::

            for i in T.serial(14):
                B[i] = A[i] * 2

        ``sch.split("i", [None, 8])`` returns ``["i_0", "i_1"]``::

            for i_0, i_1 in T.grid(2, 8):
                if i_0 * 8 + i_1 < 14:
                    B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * 2

        ``tail="partition"``::

            for i_0, i_1 in T.grid(1, 8):
                B[i_0 * 8 + i_1] = A[i_0 * 8 + i_1] * 2
            for i_1_tail in T.serial(6):
                B[i_1_tail + 8] = A[i_1_tail + 8] * 2
        """
        func = self.func
        node = find_loop(func, loop)
        if tail != "pad":
            new, loops, _ = split_rewrite(func, node, factors, tail)
            return new, [loop_ref(new, x) for x in loops]
        guarded, loops, guard = split_rewrite(func, node, factors, "predicate")
        names = [loop_ref(guarded, x) for x in loops]
        if guard is None:
            return guarded, names  # the factors divide the extent: nothing to pad
        # The same loops without the guard: their names do not change.
        padded = without_guard(guarded, guard, loops)
        check_split_pad(guarded, guard, padded, node.var.name)
        return padded, names

    @primitive
    def fuse(self, *loops):
        """Fuse adjacent, perfectly nested ``loops`` (outermost first) into one; its handle.

        Always legal: the fused loop runs the instances in the same order.

        Before::

            for i, j in T.grid(4, 6):
                B[i, j] = A[i, j]

        ``sch.fuse("i", "j")`` returns ``"i_j_fused"``::

            for i_j_fused in T.serial(24):
                B[i_j_fused // 6, i_j_fused % 6] = A[i_j_fused // 6, i_j_fused % 6]
        """
        func = self.func
        nodes = [find_loop(func, x) for x in loops]
        new, fused = fuse_rewrite(func, nodes)
        return new, loop_ref(new, fused)

    @primitive
    def reorder(self, *loops):
        """Put ``loops`` in the given order, in the places they hold in their nest.

        ``loops`` are listed outermost first, as in TVM (Halide's ``reorder``
        lists them innermost first).
        The loops must lie on one chain with rectangular bounds; loops of the
        chain that are not named stay in place.  Statements beside a loop of
        the chain (a reduction's init written before its loop) move into the
        loop's first iteration, under ``if k == <start>:``, and what follows
        the loop into its last -- TVM's ``T.init()`` form -- where isl proves
        the loop runs wherever they did (:func:`.legality.check_sunk`; refused
        with the instance that would be lost otherwise).  The new order is
        checked against every dependence (two updates of one element by an
        exact reduction may swap); a broken one raises
        :class:`~polypad.errors.IllegalTransformError` whose evidence holds
        the two instances and the element.

        Before::

            for i, j in T.grid(4, 6):
                B[j, i] = A[i, j]

        ``sch.reorder("j", "i")``::

            for j, i in T.grid(6, 4):
                B[j, i] = A[i, j]
        """
        from polypad.model import extract

        func, nodes = self._perfect([find_loop(self.func, x) for x in loops], "reorder")
        new, old_chain, new_order = reorder_rewrite(func, nodes)
        # TVM's argmin stores in the let form are asked about as stores in order.
        with asked_as_stores(func, old_chain, new_order) as (seen, (chain, order)):
            check_order(seen, reorder_schedule(extract(seen), chain, order), "reorder",
                        moved=chain[0])
        return new

    def _perfect(self, nodes: list[n.For], primitive: str) -> tuple[n.PrimFunc, list[n.For]]:
        """The function with the chain of ``nodes`` made perfect where statements beside
        a loop break it (:func:`.sink.perfect_nest`, checked), and the loops in it."""
        func = self.func
        if len(nodes) < 2:
            return func, nodes
        # A partition's tail shares statements with the main nest: copy them first.
        top = min(nodes, key=lambda x: len(ancestors(func, x)))
        unique, copy = unshared(func, top)
        inside = {x.var: x for x in walk(copy) if isinstance(x, n.For)}
        new, moved, chain = perfect_nest(unique, [inside.get(x.var, x) for x in nodes],
                                         primitive)
        by_var = {x.var: x for x in chain}
        if new is unique or any(x.var not in by_var for x in nodes):
            return func, nodes  # nothing moved, or the chain stays broken: refused as it is
        if not moved:  # only guards moved, which is exact (.sink_guards)
            return new, [by_var.get(x.var, x) for x in nodes]
        # One memo: a moved statement is one object in both functions, as check_sunk needs.
        memo: dict = {}
        stmts, into = [s for s, _ in moved], [var for _, var in moved]
        with asked_as_stores(unique, stmts, memo=memo) as (before, [read]), \
                asked_as_stores(new, memo=memo) as (after, _):
            check_sunk(before, after, list(zip(read, into, strict=True)), primitive)
        return new, [by_var.get(x.var, x) for x in nodes]

    @primitive
    def tile(self, loops, factors, *, tail: str = "predicate"):
        """Split each of the nested ``loops`` by its factor and move the inner
        loops inside; the handles of the outer loops, then of the inner ones.

        A convenience for ``split`` (``[None, factor]``, with ``tail``
        "predicate" or "pad"; a partition's tail nests could not be reordered)
        of each loop, then ``reorder`` of the new loops, outer ones first (a
        reduction's init before the loop over its axis moves into that loop's
        first iteration, as ``reorder`` moves it); the trace records it as one
        step.

        Before::

            for i, j in T.grid(16, 16):
                B[i, j] = A[j, i]

        ``sch.tile(["i", "j"], [4, 8])`` returns ``["i_0", "j_0", "i_1", "j_1"]``::

            for i_0, j_0, i_1, j_1 in T.grid(4, 2, 4, 8):
                B[i_0 * 4 + i_1, j_0 * 8 + j_1] = A[j_0 * 8 + j_1, i_0 * 4 + i_1]
        """
        if len(loops) != len(factors) or not loops:
            raise PolypadError(f"tile: {len(loops)} loops but {len(factors)} factors")
        nodes = [find_loop(self.func, x) for x in loops]
        if len(nodes) > 1:
            func, inside = self._perfect(nodes, "tile")
            chain_of(func, inside, "tile")
        # Handles taken up front stay valid: a split keeps the other loops' variables.
        names = [loop_ref(self.func, x) for x in nodes]
        outer, inner = [""] * len(names), [""] * len(names)
        # All or nothing: the nested primitives install their results as they go.
        funcs = dict(self._funcs)
        try:
            for k in reversed(range(len(names))):
                outer[k], inner[k] = self.split(names[k], [None, factors[k]], tail=tail)
            if len(names) > 1:
                self.reorder(*outer, *inner)
        except BaseException:
            self._funcs = funcs
            raise
        return self.func, outer + inner

