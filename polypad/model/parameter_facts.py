"""What the function's top-level ``T.assume``\\ s say about its parameters, for the
model's wrap-around checks.

``for i in T.serial(n): ... B[T.min(i + 2, n - 1)]`` over ``int8`` may wrap
for an unbounded ``n`` (``n - 1`` at ``n = -128``, ``i + 2`` at ``n = 127``),
and the model then refuses the index (:mod:`.accesses`).  Under
``T.assume(3 <= n and n <= 60)`` at the top of the function it cannot: the
check should see only the parameter values the assumption allows.

:func:`parameter_facts` gives each leaf the parameter set of the assumptions
that are certain to have run, and held, before any instance of it:

* the assumption is not inside a loop or an ``if`` (a ``T.where`` is one):
  it runs exactly once, on every execution that gets past it.  ``SeqStmt``,
  ``LetStmt``, ``Block``, ``Allocate`` and ``DeclBuffer`` around it execute
  their bodies unconditionally;
* it comes before the leaf in program order.  A leaf with no loop or ``if``
  in common with it then runs only after it; every loop bound and guard
  around the leaf is evaluated after it too.  A leaf before it gets nothing:
  it runs whether or not the assumption holds;
* only the conjuncts over integer parameters are used (scalar parameters and
  the symbolic sizes of parameter buffers): a conjunct that reads a buffer
  (a fact about memory, valid only until the memory changes), names a loop
  counter or a let variable, holds ``T.undef()`` or any other call, or is not
  quasi-affine, is left out; knowing less is safe;
* a conjunct in which an operation may wrap (``n + 1 > n`` is false at
  ``n = 127`` for an ``int8`` ``n``, where isl reads it as always true) is
  left out too, unless the facts before it already rule the wrap out.

Why using them is exact (docs/semantics.md, ``T.assume``): an instance after
a violated assumption is taken not to run.  Every instance of a leaf after
such an assumption comes after it in every execution, so at parameter values
where it fails no instance of the leaf runs, and the reading isl gives there
(exact integers instead of wrapped ones) describes nothing that runs.  The
statement's domain itself is not narrowed: only the questions "may this
operation wrap where the statement runs" see the facts.
"""

from __future__ import annotations

from collections.abc import Sequence

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.naming import Names
from polypad.ir.visitor import walk

from .affine import AffineSpace
from .conditions import to_set
from .domains import conjuncts
from .nest import Leaf
from .overflow import wraps_somewhere


def function_parameters(func: n.PrimFunc) -> tuple[n.Var, ...]:
    """The integer variables a caller gives ``func``: its scalar parameters and the
    symbolic sizes of its parameter buffers."""
    out: list[n.Var] = []
    for p in func.params:
        found = [p] if isinstance(p, n.Var) else [d for d in p.shape if isinstance(d, n.Var)]
        out += [v for v in found if dtypes.is_int(v.dtype) and not any(v is x for x in out)]
    return tuple(out)


def parameter_facts(leaves: Sequence[Leaf], params: Sequence[n.Var],
                    names: Names) -> list[isl.Set | None]:
    """For each leaf (in program order, as :func:`.nest.collect` gives them), the
    parameter set of the top-level assumptions over ``params`` before it, or ``None``
    where there are none (see the module docstring)."""
    space = AffineSpace((), names=names)
    known: isl.Set | None = None
    out: list[isl.Set | None] = []
    for leaf in leaves:
        out.append(known)
        if _is_top_level_assume(leaf):
            for part in conjuncts(leaf.stmt.value.args[0]):
                known = _with(known, part, params, space)
    return out


def parameter_part(cond: n.Expr, params: Sequence[n.Var]) -> n.Expr | None:
    """The conjuncts of ``cond`` over ``params`` alone, joined by ``and``, in order: all
    :func:`parameter_facts` can use of an assumption ``cond``; ``None`` where there
    are none."""
    kept = [part for part in conjuncts(cond) if over_parameters(part, params)]
    if not kept:
        return None
    out = kept[0]
    for part in kept[1:]:
        out = n.And(out, part)
    return out


def _is_top_level_assume(leaf: Leaf) -> bool:
    stmt = leaf.stmt
    return (isinstance(stmt, n.Evaluate) and isinstance(stmt.value, n.Call)
            and stmt.value.op == "assume" and len(stmt.value.args) == 1
            and not leaf.loops and not leaf.guards)


def _with(known: isl.Set | None, part: n.Expr, params: Sequence[n.Var],
          space: AffineSpace) -> isl.Set | None:
    """``known`` narrowed by the condition ``part``, where it is a usable fact."""
    if not over_parameters(part, params):
        return known
    where = known if known is not None else isl.Set.universe(isl.Space.params_alloc(
        space.ctx, 0))
    try:
        if wraps_somewhere(part, space, where):
            return known
        holds = to_set(part, space).params()
    except NotAffineError:
        return known  # ISL's error rises instead (polypad.isl_failure)
    return holds if known is None else known.intersect(holds)


def over_parameters(cond: n.Expr, params: Sequence[n.Var]) -> bool:
    """Whether ``cond`` is a boolean of integer arithmetic over ``params`` alone (a
    conjunct :func:`parameter_facts` may use)."""
    if not dtypes.is_bool(cond.dtype):
        return False
    for x in walk(cond):
        if isinstance(x, n.BufferLoad | n.Call | n.Let):
            return False
        if isinstance(x, n.Var) and not any(x is p for p in params):
            return False
    return True
