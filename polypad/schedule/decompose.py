"""The IR rewrite behind ``decompose_reduction``: a reduction's init moved out before a loop.

The init is the store that starts a reduction's element (``B[i] = 0``,
``P[...] = T.float32("-inf")``), written before the updates or in TVM's
``T.init()`` form (an ``if`` on the reduce axes at their starts).  Any
combiner of :mod:`analyses.combiners` will do, and an argmax's two stores
(:func:`.reduction_nest.init_group`: a ``T.init()`` moves whole)::

    for i in T.serial(8):                          # before
        B[i] = T.float32(0)
        for k in T.serial(16):
            B[i] = B[i] + A[i, k]

    for i_init in T.serial(8):                     # decompose(f, None, loop i)
        B[i_init] = T.float32(0)
    for i in T.serial(8):
        for k in T.serial(16):
            B[i] = B[i] + A[i, k]

The copy runs over copies of the loops between ``loop`` and the init (named
``<var>_init``), under the guards there, lets inlined; the loops a guard pins
to their first iteration (:func:`.reduction_nest.pinned`) are left out with
the guard.  The copy's guards are simplified where it stands
(:func:`polypad.transform.facts_at.facts_at`): one that isl proves always true
over the copy's loops goes.  Legal where nothing under the loop must run before the init
(:func:`.legality.check_decompose_reduction`).
"""

from __future__ import annotations

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, find_block
from polypad.ir.substitute import substitute
from polypad.ir.visitor import walk
from polypad.transform.facts_at import facts_at

from .legality import check_decompose_reduction
from .reduction_nest import (
    copy_nest,
    find_init,
    init_group,
    insert_before,
    loop_by_var,
    loop_var_names,
    pinned,
    remove,
    unshared,
)
from .update_lets import inline_update_lets


def decompose(func: n.PrimFunc, block: n.Block | None, loop: n.For
              ) -> tuple[n.PrimFunc, list[n.For]]:
    """``func`` with the init of a reduction of ``block`` moved before ``loop``, and the
    copied loops (see the module docstring)."""
    func, loop = unshared(func, loop)
    func, loop = inline_update_lets(func, loop)  # TVM's let form, read as its stores
    if block is not None:
        block = find_block(func, block.name)
    init = find_init(func, block, loop)
    if init is None:
        what = "the function" if block is None else f"block {block.name!r}"
        raise PolypadError(
            f"decompose_reduction: no reduction of {what} with an init store under the "
            f"loop over {loop.var.name} (an init writes the element an update "
            "X[e] = combine(X[e], v) then folds into, for a combiner +, *, max, min, &, |, ^)")
    path = ancestors(func, init)
    start = next(k for k, x in enumerate(path) if x is loop)
    between = path[start:-1]
    for x in between:
        if not (isinstance(x, n.For | n.SeqStmt | n.Block | n.LetStmt)
                or isinstance(x, n.IfThenElse) and x.else_case is None):
            raise PolypadError(f"decompose_reduction: the init sits under a "
                               f"{type(x).__name__} inside the loop over {loop.var.name}")
    group = init_group(func, init, loop)
    check_decompose_reduction(func, group, loop)
    chain = [x for x in between if isinstance(x, n.For | n.IfThenElse | n.LetStmt)]
    params = tuple(p for p in func.params if isinstance(p, n.Var))
    pins = pinned(chain, params)
    values = {var: value for var, (value, _) in pins.items()}
    guards = [guard for _, guard in pins.values()]

    def copied(m):
        stores = [n.BufferStore(x.buffer, substitute(x.value, m),
                                tuple(substitute(i, m) for i in x.indices)) for x in group]
        return stores[0] if len(stores) == 1 else n.SeqStmt(tuple(stores))

    copy, loops = copy_nest(chain, set(), "_init", loop_var_names(func), copied, values,
                            skip=guards)
    # The copied guards as plain as the copy's loops make them: `if 0 * 8 + 0 < 30`,
    # always true there, goes; one that may fail (`if 0 < n`) stays.
    copy = facts_at(func, loop).simplified(copy)
    if copy is None:  # the init never runs: nothing to copy, only to remove
        placed, loops = func, []
    else:
        kept = {x.var: x for x in walk(copy) if isinstance(x, n.For)}
        loops = [kept[x.var] for x in loops if x.var in kept]
        placed = insert_before(func, loop, copy)
    for x in group:  # a T.init() left empty goes too
        # The init is the very same node; a removal rebuilds the loop, its variable stays.
        top = loop_by_var(placed, loop.var, holding=x)
        path = ancestors(placed, x)
        start = next(k for k, y in enumerate(path) if y is top)
        placed = remove(placed, path[start:], x, "decompose_reduction")
    return placed, loops
