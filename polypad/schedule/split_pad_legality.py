"""The legality of ``split(tail="pad")``: the extra iterations stay inside every
buffer and change nothing, as the overcompute prover shows
(:func:`analyses.can_remove_conditional`), its answers named as the user sees the
padded function."""

from __future__ import annotations

import dataclasses

from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.visitor import walk


def check_split_pad(guarded: n.PrimFunc, guard: n.IfThenElse, padded: n.PrimFunc,
                    name: str) -> None:
    """``split`` with ``tail="pad"``: refuse ``padded`` (``guarded``, the predicate form,
    without ``guard``) unless running the guarded body everywhere stays inside every
    buffer and changes no result (the overcompute prover,
    :func:`analyses.can_remove_conditional`)."""
    import analyses

    what = f"split with tail='pad' would run extra iterations of the loop over {name}"
    bounds = analyses.check_bounds(padded)
    if isinstance(bounds, analyses.Refuted):
        cex = bounds.counterexample
        raise IllegalTransformError(f"{what} outside a buffer: {cex}; tail='predicate' "
                                    "(a guard) or tail='partition' (a tail loop) keeps them "
                                    "out", cex)
    decided = analyses.can_remove_conditional(guarded, guard)
    if isinstance(decided, analyses.Proved):
        return
    rename = _renaming(guarded, guard, padded)
    if isinstance(decided, analyses.Refuted):
        cex = decided.counterexample
        cex = dataclasses.replace(
            cex, description=rename(cex.description),
            instances=tuple(dataclasses.replace(i, statement=rename(i.statement))
                            for i in cex.instances))
        raise IllegalTransformError(f"{what} that change the result: {cex}; tail='predicate' "
                                    "or tail='partition' runs none", cex)
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
    from polypad.ir.fresh_copy import fresh_copy
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
