"""Schedule primitives: tiling family — ``get_loops``, ``split``, ``fuse``, ``reorder``, ``tile``.

Loops are named as :mod:`polypad.ir.loop_names` names them: the loop
variable's name where it is unique in the function, else ``block/var`` or
``var#k``.  ``get_loops`` hands out such names, every primitive here takes
them (or ``For`` nodes) and each primitive that makes loops returns the
names of the new ones.

``split`` with ``tail="predicate"`` or ``"partition"`` and ``fuse`` keep the
order of every statement instance, so they are always legal.  ``reorder``
changes it and is checked against the function's dependences
(:func:`analyses.dependences`); ``split`` with ``tail="pad"`` runs extra
iterations and is checked by the overcompute prover
(:func:`analyses.can_remove_conditional` on the guard of the predicate
form).  A refusal is an :class:`~polypad.errors.IllegalTransformError`
whose ``evidence`` names the statement instances and the element.
"""

from __future__ import annotations

import dataclasses

from polypad.arguments import expect, expect_choice
from polypad.errors import IllegalTransformError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import enclosing_loops, find_block, find_loop, replace
from polypad.ir.loop_names import loop_name, loop_names
from polypad.ir.visitor import walk

from . import chain, split
from .reschedule_plan import check_legal
from .state import check_references, primitive

_LOOP_REF = ((str, n.For), "a loop name (str) or a For node")


class TilingPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    def get_loops(self, block: str | None = None) -> list[str]:
        """The names of the loops around ``block``'s statements, outermost first.

        The loops outside the ``with T.block`` come first, then those inside
        it, in program order.  ``block=None`` lists every loop of the function.
        Not a primitive: it changes nothing and is not recorded.

        ::

            for n in T.serial(4):
                with T.block("compute"):
                    for i, j in T.grid(8, 8):
                        B[n, i, j] = A[n, i, j]

        ``sch.get_loops("compute")`` is ``["n", "i", "j"]``.
        """
        check_references({"block": block}, "Schedule.get_loops")
        func = self.func
        names = {id(loop): name for name, loop in loop_names(func).items()}
        if block is None:
            return list(names.values())
        node = find_block(func, block)
        outside = [names[id(x)] for x in enclosing_loops(func, node)]
        inside = [names[id(x)] for x in walk(node.body) if isinstance(x, n.For)]
        return outside + inside

    @primitive
    def split(self, loop: str | n.For, factors, *, tail: str = "predicate"):
        """Split ``loop`` into a nest of loops of the given ``factors``; their names.

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
        where = "Schedule.split"
        expect(factors, (list, tuple), "factors", where, what="a list of ints and one None")
        expect_choice(tail, split.TAILS, "tail", where)
        func = self.func
        node = find_loop(func, loop)
        if tail != "pad":
            new, loops, _ = split.split(func, node, factors, tail)
            return new, [loop_name(new, x) for x in loops]
        guarded, loops, guard = split.split(func, node, factors, "predicate")
        names = [loop_name(guarded, x) for x in loops]
        if guard is None:
            return guarded, names  # the factors divide the extent: nothing to pad
        # The same loops without the guard: their names do not change.
        return _check_pad(guarded, guard, node.var.name), names

    @primitive
    def fuse(self, *loops):
        """Fuse adjacent, perfectly nested ``loops`` (outermost first) into one; its name.

        Always legal: the fused loop runs the instances in the same order.

        Before::

            for i, j in T.grid(4, 6):
                B[i, j] = A[i, j]

        ``sch.fuse("i", "j")`` returns ``"i_j_fused"``::

            for i_j_fused in T.serial(24):
                B[i_j_fused // 6, i_j_fused % 6] = A[i_j_fused // 6, i_j_fused % 6]
        """
        func = self.func
        nodes = [find_loop(func, _loop_ref(x, "Schedule.fuse")) for x in loops]
        new, fused = chain.fuse(func, nodes)
        return new, loop_name(new, fused)

    @primitive
    def reorder(self, *loops):
        """Put ``loops`` in the given order, in the places they hold in their nest.

        ``loops`` are listed outermost first, as in TVM (Halide's ``reorder``
        lists them innermost first).
        The loops must lie on one perfectly nested chain with rectangular
        bounds; loops of the chain that are not named stay in place.  The new
        order is checked against every dependence; a broken one raises
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

        func = self.func
        nodes = [find_loop(func, _loop_ref(x, "Schedule.reorder")) for x in loops]
        new, old_chain, new_order = chain.reorder(func, nodes)
        check_legal(func, chain.reorder_schedule(extract(func), old_chain, new_order),
                    "reorder")
        return new

    @primitive
    def tile(self, loops, factors, *, tail: str = "predicate"):
        """Split each of the perfectly nested ``loops`` by its factor and move the inner
        loops inside; the names of the outer loops, then of the inner ones.

        A convenience for ``split`` (``[None, factor]``, with ``tail``
        "predicate" or "pad"; a partition's tail nests could not be reordered)
        of each loop, then ``reorder`` of the new loops, outer ones first; the
        trace records it as one step.

        Before::

            for i, j in T.grid(16, 16):
                B[i, j] = A[j, i]

        ``sch.tile(["i", "j"], [4, 8])`` returns ``["i_0", "j_0", "i_1", "j_1"]``::

            for i_0, j_0, i_1, j_1 in T.grid(4, 2, 4, 8):
                B[i_0 * 4 + i_1, j_0 * 8 + j_1] = A[j_0 * 8 + j_1, i_0 * 4 + i_1]
        """
        where = "Schedule.tile"
        expect(loops, (list, tuple), "loops", where, what="a list of loop names")
        expect(factors, (list, tuple), "factors", where, what="a list of ints")
        expect_choice(tail, ("predicate", "pad"), "tail", where)
        if len(loops) != len(factors) or not loops:
            raise PolypadError(f"tile: {len(loops)} loops but {len(factors)} factors")
        for x in loops:
            _loop_ref(x, where)
        nodes = [find_loop(self.func, x) for x in loops]
        if len(nodes) > 1:
            chain.chain_of(self.func, nodes, "tile")
        # Names taken up front stay valid: a split only adds loops with fresh names.
        # (A ``var#k`` name can shift when the split loop shared its variable's name.)
        names = [loop_name(self.func, x) for x in nodes]
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


def _loop_ref(value, where: str):
    return expect(value, _LOOP_REF[0], "loops", where, what=_LOOP_REF[1])


def _check_pad(guarded: n.PrimFunc, guard: n.IfThenElse, name: str) -> n.PrimFunc:
    """The padded function (``guarded`` without ``guard``), unless running the guarded
    body everywhere may change the result: then IllegalTransformError."""
    import analyses

    padded = replace(guarded, guard, guard.then_case)
    what = f"split with tail='pad' would run extra iterations of the loop over {name}"
    bounds = analyses.check_bounds(padded)
    if isinstance(bounds, analyses.Refuted):
        cex = bounds.counterexample
        raise IllegalTransformError(f"{what} outside a buffer: {cex}", cex)
    decided = analyses.can_remove_conditional(guarded, guard)
    if isinstance(decided, analyses.Proved):
        return padded
    rename = _renaming(guarded, guard, padded)
    if isinstance(decided, analyses.Refuted):
        cex = decided.counterexample
        cex = dataclasses.replace(
            cex, description=rename(cex.description),
            instances=tuple(dataclasses.replace(i, statement=rename(i.statement))
                            for i in cex.instances))
        raise IllegalTransformError(f"{what} that change the result: {cex}", cex)
    raise IllegalTransformError(
        f"{what}, not known to be harmless: {rename(decided.reason)}", None)


def _renaming(guarded: n.PrimFunc, guard: n.IfThenElse, padded: n.PrimFunc):
    """A function that names statements in a text (or a label) as ``padded`` does.

    The prover answers about a copy of the function where the guard reads
    ``if c: body else: body'`` (:mod:`analyses.conditional`), whose statements
    after ``body`` are numbered ``len(body)`` further on; the user sees
    ``padded``, where ``body`` appears once.
    """
    import re

    from analyses.instances import labels
    from polypad.ir.fresh import fresh_copy
    from polypad.model import extract

    both = n.IfThenElse(guard.condition, guard.then_case, fresh_copy(guard.then_case))
    asked, shown = extract(replace(guarded, guard, both)), extract(padded)
    asked_labels, shown_labels = labels(asked), labels(shown)
    inside = {id(x) for x in walk(guard.then_case)}
    first = [k for k, s in enumerate(asked.statements) if id(s.stmt) in inside]
    table = {}
    if first:
        start, count = first[0], len(first)
        for k, s in enumerate(asked.statements):
            j = k if k < start + count else k - count
            table[asked_labels[s.name]] = shown_labels[shown.statements[j].name]

    def rename(text: str) -> str:
        if text in table:
            return table[text]
        # Instances print as ``label(i=1, ...)``.
        return re.sub(r"\b(\w+)\(", lambda m: table.get(m.group(1), m.group(1)) + "(", text)

    return rename
