"""Block axis domains: ``vi = T.axis.spatial(16, i * 2)`` must keep ``vi`` in ``[0, 16)``.

TVM gives each block variable a domain, an extent or a ``(start, stop)``
pair, and requires its binding to lie in it for every instance of the
block: every value of the loop counters around it for which the enclosing
conditions and the block's ``T.where`` predicate hold (the predicate limits
the instances, so a binding may leave its domain where the predicate is
false).  The parser lowers the binding to a let
(:mod:`polypad.script.parse_block`) and, once the function is read, calls
this check through :mod:`polypad.script.checks`, where the model puts it: it
asks the polyhedral model (:func:`polypad.model.extract`), with the
contexts of :mod:`.block_regions`, a question the script layer cannot.

For each axis the model (:func:`polypad.model.extract`) gets a probe
statement where the binding stands, under its enclosing loops (kept as
loops: their counters are the probe's instance dimensions), conditions,
lets and the block's predicate.  Its domain is then exactly the block's
instances, and the binding and the domain bounds are quasi-affine
functions on it (:func:`polypad.model.to_pw_aff`); the instances where the
binding is below ``lo`` or not below ``hi`` are the violations.  Symbolic
sizes are parameters, limited to their dtypes' ranges.  A violation is a
:class:`~polypad.errors.ParseError` at the ``T.axis`` call naming the
axis, the value and the first such instance, loop counters outer first.

Where the model cannot decide, nothing is refused: a binding, bound or
predicate that is not quasi-affine (a data-dependent binding, a guard the
model drops), or one whose arithmetic may wrap around its dtype at some
instance (ISL's integers do not wrap).  ``T.axis.remap`` has no domain of
its own (the loop's range is the domain), so it has nothing to check.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import operators as ops
from polypad.ir.nodes import (
    Buffer,
    BufferStore,
    Expr,
    IfThenElse,
    LetStmt,
    PrimFunc,
    Stmt,
    Var,
)
from polypad.ir.ranges import dtype_range
from polypad.script.checks import AxisDomain, BlockAxes

from .affine import to_pw_aff
from .block_regions import stmt_contexts
from .extract import extract
from .overflow import first_point, wraps_somewhere


def check_axes(src, body: Stmt, blocks: list[BlockAxes], sizes: tuple[Var, ...] = ()) -> None:
    """Raise a ParseError at the first axis whose binding leaves its domain, for values
    of the variables ``sizes`` (a parameter buffer's symbolic sizes) that are not negative.

    >>> parse('''
    ... @T.prim_func
    ... def f(A: T.Buffer((16,), "float32")):
    ...     for i in range(9):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(16, i * 2)
    ...             A[vi] = 0.0''')
    Traceback (most recent call last):
    ParseError: ... T.axis.spatial(16, i * 2) binds vi to 16 at i = 8, outside its domain [0, 16)
    """
    if not blocks:
        return
    wheres = {id(b.where) for b in blocks if b.where is not None}
    variables = {id(a.var) for b in blocks for a in b.axes}
    found = stmt_contexts(body, lambda s: (
        (isinstance(s, LetStmt) and id(s.var) in variables)
        or (isinstance(s, IfThenElse) and id(s.condition) in wheres)), free_loops=False,
        assumed=True)
    lets = {id(s.var): (s, wrap) for s, wrap, _ in found if isinstance(s, LetStmt)}
    guards = {id(s.condition): (s, wrap) for s, wrap, _ in found if isinstance(s, IfThenElse)}
    for block in blocks:
        for k, axis in enumerate(block.axes):
            if id(axis.var) not in lets:
                continue  # not in the body any more: nothing to check
            let, wrap = lets[id(axis.var)]
            probe = BufferStore(_PROBE, ops.const(0, "int32"), (ops.const(0, "int32"),))
            if k < block.guarded and id(block.where) in guards:
                # Checked where the predicate holds: its context binds the axis already.
                guard, wrap = guards[id(block.where)]
                stmt = wrap(IfThenElse(guard.condition, probe))
            else:
                stmt = wrap(LetStmt(axis.var, let.value, probe))
            found = violation(axis, let.value, stmt, probe, sizes)
            if found is not None:
                raise src.error(axis.node, f"{ast.unparse(axis.node)} binds {axis.var.name} "
                                           f"to {found}, outside its domain {axis.text}")


@dataclass(frozen=True)
class Violation:
    """The evidence: at ``instance`` (loop counters outer first, then symbolic
    sizes, as ``(name, value)``) the binding takes ``value``, outside its domain."""

    value: int
    instance: tuple[tuple[str, int], ...]

    def __str__(self) -> str:
        at = ", ".join(f"{name} = {v}" for name, v in self.instance)
        return f"{self.value} at {at}" if at else str(self.value)


_PROBE = Buffer("probe", (1,), "int32")


@dataclass(frozen=True)
class Undecided:
    """The model cannot decide whether a binding stays in its domain; ``reason`` says why."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def violation(axis: AxisDomain, value: Expr, stmt: Stmt, probe: Stmt,
              sizes: tuple[Var, ...] = ()) -> Violation | None:
    """The first instance of ``probe`` in ``stmt`` where ``axis`` leaves its domain
    (with the variables ``sizes`` not negative).

    ``stmt`` is the probe in the binding's context; ``value`` is the
    binding.  None where every instance stays in the domain, and where the
    model cannot decide.
    """
    found = decide(axis, value, stmt, probe, sizes)
    return found if isinstance(found, Violation) else None


def decide(axis: AxisDomain, value: Expr, stmt: Stmt, probe: Stmt,
           sizes: tuple[Var, ...] = ()) -> Violation | Undecided | None:
    """As :func:`violation`, telling "in its domain" (None) from "cannot say"
    (:class:`Undecided`).  ``axis`` needs only its ``var``, ``lo`` and ``hi``
    (the IR's block headers ask through :mod:`.block_bindings`)."""
    try:
        model = extract(PrimFunc("axis", (), stmt))
        (s,) = [s for s in model.statements if s.stmt is probe]
        if s.may:
            return Undecided("a guard around the block is not quasi-affine: the model "
                             "does not know exactly where it runs")
        domain = s.domain.intersect_params(_in_dtypes(s.domain, model.names, sizes))
        if any(wraps_somewhere(e, s.space, domain) for e in (value, axis.lo, axis.hi)):
            return Undecided("the binding or its domain may wrap around its dtype")
        v, lo, hi = (to_pw_aff(e, s.space) for e in (axis.var, axis.lo, axis.hi))
    except NotAffineError as err:
        return Undecided(str(err))
    outside = domain.intersect(v.lt_set(lo).union(v.ge_set(hi)))
    if outside.is_empty():
        return None
    coords, params = first_point(v, outside)  # the first instance, and its value
    names = [model.names.name(var) for var in s.loop_vars] + params
    return Violation(coords[-1], tuple(zip(names, coords[:-1], strict=True)))


def _in_dtypes(domain: isl.Set, names, sizes: tuple[Var, ...] = ()) -> isl.Set:
    """The values of ``domain``'s parameters that their dtypes hold (from 0 for the
    variables ``sizes``)."""
    out = isl.Set.universe(domain.get_space().params())
    for k in range(domain.dim(isl.dim_type.param)):
        name = domain.get_dim_name(isl.dim_type.param, k)
        var = names.lookup(name)
        if isinstance(var, Var):
            lo, hi = dtype_range(var.dtype)
            lo = max(lo, 0) if any(var is x for x in sizes) else lo
            out = out.intersect(isl.Set(f"[{name}] -> {{ : {lo} <= {name} <= {hi} }}"))
    return out
