"""Loops from ISL's AST, checked to run exactly the instances they were built for.

ISL's AST generation (islpy 2026.2.2) can lose instances of a strided
dimension, taking it for one value: ``{ S[i, a, j] : (i + 4a + j - 2) mod 8
= 0, 0 <= a <= 2, 0 <= j <= 2, 2 - i <= j <= 6 - i, 0 <= i <= 7 }`` gives
``S(c0, c0 / 4, -(c0 % 4) + 2)``, one call where ``a`` takes two values for
``c0 < 3``; its *atomic* form builds them right.  :class:`RunsChecked`
converts an AST as :class:`.ast_to_ir.AstToIR` does and records, for each
call, the instances it runs (its arguments over the enclosing loops and
guards, in ISL), and whether one instance runs twice; :func:`checked_loops`
builds the AST, compares, builds the atomic form where they differ, and
refuses where that differs too, so that such an AST is refused rather than
miscompiled.
"""

from __future__ import annotations

from collections.abc import Callable

import islpy as isl

from polypad.errors import NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.operators import logical_and
from polypad.isl_failure import rise_unless_expected
from polypad.model import AffineSpace, to_pw_aff, to_set

from .ast_to_ir import AstToIR

# ISL's refusals of a schedule it cannot write as loops (a bound with no
# optimum): a fact about the schedule asked for, refused as such.
_AST_REFUSALS = ("unbounded optimum",)


class RunsChecked(AstToIR):
    """An :class:`AstToIR` that records the instances each statement's calls run.

    ``names`` name the parameters as the instance sets do; ``context`` is what the
    AST was built under (and holds of the parameters)."""

    def __init__(self, env, user=None, dtype: str = "int32", *, names, context: isl.Set):
        super().__init__(env, user, dtype)
        self.names = names
        self.context = context
        # The instances each statement's calls run; None once not affine.
        self.executed: dict[str, isl.Set] | None = {}
        # Whether some instance runs twice (two calls, or two iterations of one call).
        self.repeated = False

    def _space(self) -> tuple[list[n.Var], AffineSpace, isl.Set]:
        """The enclosing loops' variables, their space, and where the current node runs:
        the loops' bounds, the enclosing guards, the context."""
        vars = [var for _, var, _, _ in self.loops]
        space = AffineSpace(vars, names=self.names)
        where = space.universe
        for _, var, lo, extent in self.loops:
            where = where.intersect(to_set(logical_and(var >= lo, var < lo + extent), space))
        for guard in self.guards:
            where = where.intersect(to_set(guard, space))
        params = isl.Set.universe(where.get_space()).intersect_params(self.context)
        return vars, space, where.intersect(params)

    def user(self, name: str, args: list[n.Expr], node: isl.AstNode) -> n.Stmt | None:
        self.record(name, args)
        return super().user(name, args, node)

    def record(self, name: str, args: list[n.Expr]) -> None:
        """Add the instances this call of ``name`` runs."""
        if self.executed is None:
            return
        try:
            _, space, where = self._space()
            if args:
                pieces = [isl.Map.from_pw_aff(to_pw_aff(a, space)) for a in args]
                image = pieces[0]
                for piece in pieces[1:]:
                    image = image.flat_range_product(piece)
                image = image.intersect_domain(where)
                # Two iterations of the loops around the call at one instance.
                once = image.is_injective()
                ran = image.range()
            else:
                once = where.is_equal(where.lexmin())  # one iteration per parameter value
                ran = isl.Set.from_params(where.params())
        except NotAffineError:
            self.executed = None
            return
        ran = ran.set_tuple_name(name)
        found = self.executed.get(name)
        if not once or (found is not None and not _intersection(found, ran).is_empty()):
            self.repeated = True
        self.executed[name] = ran if found is None else _union(found, ran)

    def runs(self, instances: dict[str, isl.Set]) -> bool:
        """Whether the calls converted run exactly ``instances`` (where the context
        holds), each once; True when that cannot be said (a bound or guard that is not
        affine)."""
        if self.executed is None:
            return True
        if self.repeated:
            return False
        for name, wanted in instances.items():
            wanted = wanted.intersect_params(self.context)
            got = self.executed.get(name)
            if got is None:
                if not wanted.is_empty():
                    return False
                continue
            if not _same_set(got, wanted):
                return False
        return True


def checked_loops(build: isl.AstBuild, schedule: isl.UnionMap, dims: int,
                  converter: Callable[[], RunsChecked], instances: dict[str, isl.Set],
                  where: str) -> n.Stmt | None:
    """The IR of ``schedule``'s AST (``dims`` schedule dimensions) by a fresh
    ``converter()``, built again in ISL's atomic form where it does not run exactly
    ``instances``; a :class:`PolypadError` naming ``where`` when neither does."""
    convert = converter()
    out = convert.stmt(_ast(build, schedule, where))
    if convert.runs(instances):
        return out
    names = ", ".join(f"d{k}" for k in range(dims))
    atomic = isl.UnionMap(f"{{ [{names}] -> atomic[x] }}")
    convert = converter()
    out = convert.stmt(_ast(build.set_options(atomic), schedule, where))
    if convert.runs(instances):
        return out
    raise PolypadError(f"{where}: ISL built loops that do not run exactly the instances "
                       f"asked for, each once ({', '.join(sorted(instances))})")


def _ast(build: isl.AstBuild, schedule: isl.UnionMap, where: str) -> isl.AstNode:
    """ISL's AST of ``schedule``; a :class:`PolypadError` naming ``where`` where ISL
    fails (an unbounded optimum in its loop bounds, say) instead of ISL's error.
    ISL's operation limit is the budget's error (the primitive says it did not
    settle in time), and ISL's failure empties the caches as any does
    (:mod:`polypad.isl_failure`)."""
    try:
        return build.node_from_schedule_map(schedule)
    except isl.Error as error:
        rise_unless_expected(error, *_AST_REFUSALS)
        raise PolypadError(f"{where}: ISL could not build the loops: {error}") from None


def _plain(s: isl.Set) -> isl.Set:
    """``s`` with its dimensions named by position, so that two sets of one statement
    compare whatever their dimensions were called."""
    for k in range(s.dim(isl.dim_type.set)):
        s = s.set_dim_name(isl.dim_type.set, k, f"_d{k}")
    return s


def _union(a: isl.Set, b: isl.Set) -> isl.Set:
    a, b = _plain(a), _plain(b)
    return a.align_params(b.get_space()).union(b.align_params(a.get_space()))


def _intersection(a: isl.Set, b: isl.Set) -> isl.Set:
    a, b = _plain(a), _plain(b)
    return a.align_params(b.get_space()).intersect(b.align_params(a.get_space()))


def _same_set(got: isl.Set, wanted: isl.Set) -> bool:
    got, wanted = _plain(got), _plain(wanted)
    return got.align_params(wanted.get_space()).is_equal(
        wanted.align_params(got.get_space()))
