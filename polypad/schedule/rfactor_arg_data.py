"""Why ``rfactor`` refuses an argmax whose index is read from a buffer.

TVM's argmax stores an index read from data, ``idx[i, k]``, where the best
value so far is beaten::

    v_argmax_v0: T.int32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v0[i], idx[i, k])
    v_argmax_v1: T.float32 = T.Select(argmax_v1[i] >= val[i, k], argmax_v1[i], val[i, k])

The nest keeps the index of the *first* step with the best value.  The
partial winners of ``rfactor`` (:mod:`.rfactor_arg`) are folded by the best
value and, on a tie, the smaller index -- the first step's only where the
index grows from step to step, which isl checks of an index computed from the
loops, and which a data buffer does not promise.  Two steps with the best
value, in different lanes of the factored loop, with their ``idx`` values out
of order are a counterexample: the nest keeps the first step's ``idx``, the
fold the smaller, the second's.  Refused, with those two steps and values;
``T.if_then_else(..., k, ...)`` (the index by the loop variable) is legal.

TVM accepts this form by rule.  Its fold keeps the pair of the earlier lane on
a tie, which is not the first step either where the factored loop is the
inner one: with ``k = i1_0 * 32 + i1_1`` and the best value at ``k = 1`` (lane
1) and ``k = 32`` (lane 0), it keeps ``idx[i, 32]`` where the nest keeps
``idx[i, 1]``.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import IllegalTransformError, NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import Rewriter, walk

from .reduction_nest import conjunction, conjuncts, let_values


def check_index_not_data(nest, arg, indices, loop: n.For, where: str) -> None:
    """Refuse the arg-reduction ``arg`` where its index reads a buffer and two steps
    of one element in different lanes of ``loop`` can tie (see the module
    docstring); nothing where the index reads no buffer."""
    from polypad.model.conditions import to_set

    lets = let_values(nest)
    index = substitute(arg.index, lets)
    loads = [x for x in walk(index) if isinstance(x, n.BufferLoad)]
    if not loads:
        return
    loops = [x for x in nest if isinstance(x, n.For)]
    spatial = {v for e in indices for v in free_vars(e)}
    later = {x.var: n.Var(x.var.name + "'", x.var.dtype) for x in loops}
    steps = [x for x in loops if x.var not in spatial]
    before = None
    for depth, x in enumerate(steps):
        term = conjunction([n.Eq(y.var, later[y.var]) for y in steps[:depth]]
                           + [n.Lt(x.var, later[x.var])])
        before = term if before is None else n.Or(before, term)
    parts = _domain(nest, lets, {}) + _domain(nest, lets, later)
    parts += [n.Eq(x.var, later[x.var]) for x in loops if x.var in spatial]
    parts += [before, n.Ne(loop.var, later[loop.var])]
    space = [x.var for x in loops] + [later[x.var] for x in loops]
    try:
        pairs = to_set(conjunction(parts), space)
    except NotAffineError as error:
        raise PolypadError(f"{where}: the index stored into {arg.index_buffer.name} reads "
                           f"a buffer, and the steps cannot be paired: {error}") from error
    if pairs.is_empty():
        return  # one lane: the fold meets no tie between lanes
    point = pairs.lexmin().sample_point()
    at = {v: int(point.get_coordinate_val(isl.dim_type.set, k).to_python())
          for k, v in enumerate(space)}
    value = substitute(arg.update.operand, lets)
    values = {v.name: at[v] for v in space}
    index_at = [_at(index, m, space, point) for m in ({}, later)]
    value_at = [_at(value, m, space, point) for m in ({}, later)]
    best, beyond = (("largest", "larger") if arg.update.combiner.name == "max"
                    else ("smallest", "smaller"))
    values.update({index_at[0]: 1, index_at[1]: 0, value_at[0]: 0.0, value_at[1]: 0.0})
    first = ", ".join(f"{x.var.name}={at[x.var]}" for x in loops)
    second = ", ".join(f"{x.var.name}={at[later[x.var]]}" for x in loops)
    raise IllegalTransformError(
        f"{where}: the index stored into {arg.index_buffer.name} is read from a buffer "
        f"({loads[0].buffer.name}), whose values need not grow from step to step, so "
        "folding the partial winners by the smaller index on a tie would not keep the "
        f"first best step's: with {value_at[0]} = {value_at[1]} = 0 the {best} of the "
        f"row (and {beyond} than its start), at the steps ({first}) and then ({second}), "
        f"in different lanes of {loop.var.name}, and {index_at[0]} = 1, {index_at[1]} = 0, "
        "the nest stores 1, the factored fold 0.  Store the reduction's index instead, an "
        "expression of the loop variables that grows along them (k in "
        "T.if_then_else(A[i, k] > M[i], k, I[i])), and read the data at it after the "
        "reduction", values)


def _at(expr: n.Expr, rename: dict, space, point: isl.Point) -> str:
    """``expr`` at the step ``point`` (over ``rename``'s variables), its loads' indices
    evaluated: ``idx[0, 33]``."""
    from polypad.model.affine import to_pw_aff

    class _Indices(Rewriter):
        def visit_BufferLoad(self, node: n.BufferLoad):
            return n.BufferLoad(node.buffer, tuple(
                n.IntImm(int(to_pw_aff(substitute(i, rename), space).eval(point).to_python()),
                         i.dtype) for i in node.indices))

    return show(_Indices().visit(expr))


def _domain(nest, lets, rename) -> list[n.Expr]:
    """The nest's loop bounds and guards, lets inlined, over ``rename``'s variables."""
    parts = []
    for x in nest:
        if isinstance(x, n.For):
            lo = substitute(substitute(x.min, lets), rename)
            v = rename.get(x.var, x.var)
            parts += [n.Ge(v, lo),
                      n.Lt(v, n.Add(lo, substitute(substitute(x.extent, lets), rename)))]
        elif isinstance(x, n.IfThenElse):
            parts += [substitute(substitute(c, lets), rename) for c in conjuncts(x.condition)]
    return parts
