"""The parameter values for which every access stays inside its buffer:
``bounds_precondition(f)``.

:func:`analyses.check_bounds` asks whether every access stays inside for
*every* parameter value.  Many kernels are inside for some values only::

    for i in T.serial(n):                        # A: T.Buffer((7,), "float32")
        A[i % 7] = A[i // 4] + A[i // 4] - A[i % 2]

is inside exactly when ``n <= 28``.  As TVM does, such a function is the
caller's contract: :func:`codegen.build` builds it and checks, once per call,
that the parameters passed satisfy the precondition.  isl derives it exactly:
for each access, the out-of-bounds instances
``{ S[y] -> A[e] : y runs, e = index(y) outside A }`` (those of
``check_bounds``, within the assumptions before the access) project onto the
parameters (``params()``); the precondition is what the caller can pass
(each parameter within its dtype, symbolic extents not negative, the integer
assumptions at the top of the function) minus their union (``subtract``),
simplified within what the caller can pass (``gist``, ``coalesce``) and read
back into IR by :func:`polypad.model.set_to_condition`.

Two kinds of access give no exact out-of-bounds set, and are left out of
the precondition: an index isl cannot read (``A[B[i]]``, ``A[i * j]``, or one
whose ``//``, ``%``, ``min`` or ``max`` may take a wrapped operand), and an
access under a condition the model cannot read (``if B[i] > 0``, which may
keep the instance from running).  They stay run-time questions
(``codegen.build`` checks them where they run), and :attr:`BoundsPrecondition.decision`
is ``Unknown`` naming them.  :attr:`BoundsPrecondition.undecided` lists
them one by one (each load or store, its buffer and indices as written, and
why), which is what ``codegen.build`` guards at run time, each with the
axes it may leave on (:mod:`analyses.bounds_axes`: every axis decided
alone, so ``A[B[i], j]`` is checked on its first axis only); every other
access is proved inside wherever the condition holds.

>>> pre = bounds_precondition(f)
>>> pp.script(pre.condition)         # 'n < 29'
>>> pre.violation({n: 29})           # Counterexample: load of A[i // 4] ..., element A[7]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import islpy as isl

from polypad.errors import DTypeError, NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.show import show
from polypad.ir.visitor import walk
from polypad.model import set_to_condition

from .bounds import Checker, Outside, site_accesses, statement_labels
from .bounds_axes import undecided_axes
from .budgeted import decider
from .evidence import Counterexample, Proved, Refuted, Unknown
from .program import program_of


@dataclass(frozen=True, eq=False)
class UndecidedAccess:
    """One access the analysis could not prove inside its buffer, even where the
    condition holds: ``node`` is the ``BufferLoad`` or ``BufferStore`` as written,
    ``description`` says which (``load of A[B[i]] at f.py:5``), ``where`` where
    (`` at f.py:5``, empty without a source span) and ``reason`` why."""

    node: n.BufferLoad | n.BufferStore
    description: str
    reason: str
    where: str = ""
    #: The axes that may leave their extent (:mod:`analyses.bounds_axes`); the
    #: others are proved inside, each alone, wherever the condition holds.
    #: None (not decided axis by axis) is every axis.
    axes: tuple[int, ...] | None = None

    @property
    def checked_axes(self) -> tuple[int, ...]:
        """The axes a run-time check tests: :attr:`axes`, or every axis where None."""
        return tuple(range(len(self.node.indices))) if self.axes is None else self.axes

    @property
    def buffer(self) -> n.Buffer:
        """The buffer accessed."""
        return self.node.buffer

    @property
    def indices(self) -> tuple[n.Expr, ...]:
        """The access's indices, as written."""
        return tuple(self.node.indices)

    @property
    def is_store(self) -> bool:
        """Whether the access is a store (else a load)."""
        return isinstance(self.node, n.BufferStore)

    @property
    def key(self) -> tuple:
        """``(buffer, indices)``: equal for two accesses written alike."""
        return access_key(self.node)


def access_key(node: n.BufferLoad | n.BufferStore) -> tuple:
    """``(buffer, indices)`` of an access: IR equality is exact (same variables and
    buffers), so equal keys are accesses written alike in one function."""
    return node.buffer, tuple(node.indices)


@dataclass(frozen=True, eq=False)
class BoundsPrecondition:
    """What :func:`bounds_precondition` found.

    ``condition`` is a boolean IR expression over the scalar parameters (and
    symbolic extents) that holds exactly at the parameter values for which
    every access it could model stays inside its buffer, among those the
    caller can pass; ``BoolImm(True)`` when no value needs excluding.
    ``allowed`` is the same set in isl, and ``context`` the parameter values
    the caller can pass.  ``decision`` is ``Refuted`` when no such value is
    allowed (the counterexample of the first access outside), ``Unknown``
    naming the accesses left to run time, else ``Proved``.

    ``undecided`` are those accesses, in program order, one per access written
    (an access that both leaves its buffer at some parameter values and has
    no IR form for them is one too), each with the axes it may leave on
    (:attr:`UndecidedAccess.axes`); ``proved`` are the keys
    (:func:`access_key`) of the accesses proved inside wherever ``condition``
    holds, each of whose every occurrence is (a key shared with an
    undecided access is not among them).
    """

    condition: n.Expr
    allowed: isl.Set
    context: isl.Set
    decision: Proved | Refuted | Unknown
    _checker: Checker
    _outside: tuple  # (access, label, Outside), in program order
    undecided: tuple[UndecidedAccess, ...] = ()
    proved: frozenset = frozenset()

    @property
    def needed(self) -> bool:
        """Whether a call must be checked: some parameter value is excluded."""
        return not (isinstance(self.condition, n.BoolImm) and self.condition.value)

    @property
    def variables(self) -> list[n.Var]:
        """The parameters ``condition`` reads, in the function's parameter order."""
        used = {x for x in walk(self.condition) if isinstance(x, n.Var)}
        return [p for p in self._checker.program.func.params if p in used]

    def violation(self, values: Mapping[n.Var, int]) -> Counterexample | None:
        """The first access (in program order) outside its buffer when the parameters
        in ``values`` have those values, or None."""
        names = self._checker.program.names
        for access, label, outside in self._outside:
            bad = outside.bad
            for var, value in values.items():
                k = bad.find_dim_by_name(isl.dim_type.param, names.name(var))
                if k >= 0:
                    bad = bad.fix_val(isl.dim_type.param, k, isl.Val(str(int(value))))
            if not bad.is_empty():
                return self._checker.counterexample(access, label, bad,
                                                    outside.buffer)
        return None


@decider
def bounds_precondition(f: n.PrimFunc) -> BoundsPrecondition | Unknown:
    """The parameter values of ``f`` for which every access stays inside its buffer
    (a :class:`BoundsPrecondition`); ``Unknown`` when the time budget runs out.

    >>> bounds_precondition(f).condition     # for i in T.serial(n): A[i // 4] ..., A of 7
    Lt(Var(n), IntImm(29))
    """
    if not isinstance(f, n.PrimFunc):
        raise PolypadError(f"bounds_precondition takes a PrimFunc, not {type(f).__name__}")
    checker = Checker(program_of(f))
    program = checker.program
    outside: list = []
    reasons: list[str] = []
    undecided: dict = {}  # id(node) -> UndecidedAccess, in program order
    occurrences: dict = {}  # id(node) -> its undecided accesses (a node may be shared)
    keys: set = set()
    first_site = None
    count = 0
    for site, label in zip(program.sites, statement_labels(f.body), strict=True):
        for access in site_accesses(site):
            count += 1
            first_site = first_site or site
            for buffer, indices in checker.targets(access):
                found = checker.examine(access, buffer, indices)
                reason = None
                if isinstance(found, Unknown):
                    reason = found.reason
                elif isinstance(found, Outside) and found.unmodelled:
                    reason = checker.decide(access, label).reason
                elif isinstance(found, Outside):
                    outside.append((access, label, found))
                if reason is not None and reason not in reasons:
                    reasons.append(reason)
                if reason is not None:
                    occurrences.setdefault(id(access.node), []).append(access)
                if reason is not None and id(access.node) not in undecided:
                    undecided[id(access.node)] = UndecidedAccess(
                        access.node, access.describe(), reason, access.where())
            keys.add(access_key(access.node))
    context = checker.extents.intersect(program.parameter_box())
    if first_site is not None:
        context = context.intersect(program.parameter_context(first_site))
    allowed, condition = _allowed(context, [found.bad for _, _, found in outside], program)
    if condition is None:
        # Wrapped indices put `mod 2**bits` in the set, which the IR's integers cannot
        # write: exclude every value at which an exact index leaves its buffer.
        wider, condition = _allowed(
            context, [found.bad if found.exact is None else found.exact
                      for _, _, found in outside], program)
        if condition is not None and wider.is_empty() and not allowed.is_empty():
            condition = None  # it would refuse values that are fine
        elif condition is not None:
            allowed = wider
            if not allowed.is_equal(context):
                reasons.append(f"{show(condition)} also excludes parameter values at which "
                               "an index wraps around its integer type and may land inside")
    if condition is None:  # no IR form: nothing to check at run time
        allowed, condition = context, n.BoolImm(True)
        why = ("the parameter values that keep every access inside have no IR form; "
               "the accesses that may leave their buffer are checked at run time")
        reasons.append(why)
        for access, _, _ in outside:
            occurrences.setdefault(id(access.node), []).append(access)
            undecided.setdefault(id(access.node), UndecidedAccess(
                access.node, access.describe(), why, access.where()))
    if outside and allowed.is_empty() and not context.is_empty():
        # The first access outside for a value the caller can pass.
        access, label, bad, buffer = next(
            (a, lab, found.bad.intersect_params(context), found.buffer)
            for a, lab, found in outside if not found.bad.intersect_params(context).is_empty())
        decision = Refuted(checker.counterexample(access, label, bad, buffer))
    elif reasons:
        decision = Unknown("; ".join(reasons))
    elif outside:
        decision = Proved("isl", f"{count} accesses stay inside their buffers where "
                                 f"{show(condition)}")
    else:
        decision = Proved("isl", f"{count} accesses stay inside their buffers")
    # Each axis decided alone, where the run-time check will hold the parameters to
    # `allowed`; a node written once but reached twice (a shared subtree) keeps
    # every axis either occurrence may leave on.
    left = []
    for key, u in undecided.items():
        axes = set()
        for access in occurrences[key]:
            axes.update(undecided_axes(checker, access, allowed))
        left.append(replace(u, axes=tuple(sorted(axes))))
    left = tuple(left)
    proved = frozenset(keys - {u.key for u in left})
    return BoundsPrecondition(condition, allowed, context, decision, checker, tuple(outside),
                              left, proved)


def _allowed(context: isl.Set, bad: list[isl.Map], program) -> tuple[isl.Set, n.Expr | None]:
    """``context`` minus the parameter values of ``bad``, and its IR form (None when
    its constants do not fit the parameters' dtypes)."""
    excluded = isl.Set.empty(context.get_space())
    for relation in bad:
        excluded = excluded.union(relation.params())
    allowed = context.subtract(excluded).coalesce()
    try:
        return allowed, set_to_condition(allowed, (), program.names, context=context)
    except (DTypeError, NotAffineError):
        return allowed, None
