"""May this conditional be removed?  (RFC 0077, Remove Branching Through Overcompute.)

``can_remove_conditional(f, if_stmt)`` decides whether ``if_stmt`` may be
replaced by one of its branches, run unconditionally:

* **No else branch** (``if c: body``): running ``body`` where ``c`` is false
  must change nothing.  The question is put to :func:`analyses.is_no_op`
  exactly: in a copy of ``f`` where the statement reads
  ``if c: body else: body'`` (``body'`` a fresh copy of ``body``), is
  ``body'`` a no-op?  That copy means "run ``body`` everywhere", and without
  ``body'`` it is ``f`` again, so "``body'`` is a no-op" is "the overcompute
  is harmless".  Every no-op rule counts: the padding is overwritten later
  before anyone reads it (a pad-value block), the buffer is freed unread,
  or the body stores what is already there (``T.assume`` facts about the
  padding, values stored earlier).  When the body, run everywhere, would
  leave a buffer, the same question is asked once more of the body with
  the leaving indices wrapped modulo their extents (RFC 0077's
  ``(io + (ii + fi) // 8) % 3``), after a proof that the wrap changes
  nothing where ``c`` holds (:mod:`analyses.wrap_indices`); the
  ``Removable`` then carries the wrapped body as its ``replacement``.
* **An else branch** (``if c: a else: b``): the RFC's rule, generalised.
  ``a`` may replace the whole statement when, where ``c`` is false, ``a``
  does what ``b`` does: the two have the same shape, loops the same ranges,
  stores the same elements, and the values they store are proven the same
  by :func:`analyses.prove` at each store of ``b`` -- so buffer values known
  from assumptions and earlier stores are substituted, as the RFC asks.
  Statements with no effect (``T.evaluate(0)``) are left out of the
  comparison: ``if c: A[i] = 4; T.evaluate(0) else: A[i] = 4`` stores the
  same either way (TVM's ``TestIntroduceNoOp``), and the branch tried first
  is the one with fewer of them, so that ``A[i] = 4`` replaces it.
  Two expressions that differ only in integer indices are the same where ISL
  proves those indices equal (no wrap-around), without Z3.
  Failing that, the reverse: ``b`` where ``c`` holds does what ``a`` does.
  The answer is ``Refuted`` only when both replacements are refuted; where
  one is refuted and the other undecided it is ``Unknown`` (that one may
  still be right), naming both.

``Proved`` (a :class:`Removable`) says which branch to keep and why;
``Refuted`` carries the instance, the element and the values that would
differ; ``Unknown`` says what could not be decided.  With ``strict_ieee``,
values are IEEE floats and "the same" is bit-level, so ``0 * F`` is not 0
when ``F`` may be ``inf``.

>>> can_remove_conditional(f, "compute")   # Proved: overwritten by B_pad_value
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from polypad.arguments import expect
from polypad.errors import NotFoundError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.intrinsics import is_call
from polypad.ir.locate import find_block, replace
from polypad.ir.opaque import OpaqueSite
from polypad.ir.operators import logical_and, logical_not, logical_or
from polypad.ir.show import show
from polypad.ir.structural import structural_equal
from polypad.ir.substitute import substitute
from polypad.ir.visitor import node_fields, walk

from .bounds import check_bounds
from .budgeted import decider
from .canonical import CanonicalForm, canonical_form, unmodelled
from .context import context_at
from .evidence import Counterexample, Decision, Proved, Refuted, Unknown
from .execution_refutation import refute_by_execution, runs_exactly
from .facts import has_undef
from .kept_checks import holds_check
from .no_op import is_no_op
from .padding_reads import introduced_padding_read
from .proof_options import ProofOptions
from .prover import is_index_question, prove, prove_same_value, proved_by_isl
from .wrap_indices import wrap_leaving_indices


@dataclass(frozen=True)
class Removable(Proved):
    """``Proved`` for a conditional: ``keep`` is the branch that replaces it (``"then"`` or
    ``"else"``).

    ``replacement``, when set, is what replaces it instead of the branch as
    it stands: the then branch with its leaving indices wrapped
    (:mod:`analyses.wrap_indices`); ``rebuilt`` pairs each ``if`` nested in
    the branch with its counterpart in ``replacement``.
    """

    keep: str = "then"
    replacement: n.Stmt | None = field(default=None, compare=False, repr=False)
    rebuilt: tuple = field(default=(), compare=False, repr=False)

    def kept(self, stmt: n.IfThenElse) -> n.Stmt:
        """What replaces the conditional ``stmt`` this decision is about: the
        ``replacement`` when there is one, else the branch ``keep`` names."""
        if self.replacement is not None:
            return self.replacement
        return stmt.then_case if self.keep == "then" else stmt.else_case

    def kept_what(self) -> str:
        """``"the then branch"``, ``"the else branch"``, or ``"the then branch with its
        indices wrapped"``: for messages."""
        wrapped = " with its indices wrapped" if self.replacement is not None else ""
        return f"the {self.keep} branch{wrapped}"


@decider
def can_remove_conditional(f: n.PrimFunc, stmt: n.IfThenElse | str, *,
                           strict_ieee: bool = False, options: ProofOptions | None = None
                           ) -> Proved | Refuted | Unknown:
    """Whether the ``if`` statement ``stmt`` of ``f`` may be replaced by one of its branches.

    ``stmt`` is an ``IfThenElse`` of ``f`` (by identity) or the name of a
    block holding exactly one.  See the module docstring for the rules.
    ``options`` are the prover's (:class:`~analyses.proof_options.ProofOptions`),
    for a decider asking on behalf of another; ``strict_ieee=True`` is them with
    IEEE floats.
    """
    expect(stmt, (n.IfThenElse, str), "stmt", "can_remove_conditional",
           what="an IfThenElse of f or the name of a block holding one")
    stmt = conditional_of(f, stmt)
    options = ProofOptions.of(strict_ieee, options)
    form = canonical_form(f)
    if form is not None:
        return _on_canonical_form(f, stmt, form, options)
    if any(isinstance(x, n.Evaluate) and is_call(x.value, "assume") for x in walk(stmt)):
        return Unknown("the conditional holds a T.assume: removing the condition would "
                       "assert a fact where it was not stated")
    if holds_check(stmt):
        return Unknown("the conditional holds an assert: removing the condition would run "
                       "a check that may raise where it did not run")
    if stmt.else_case is None:
        return _decide(f, stmt, "then", options)
    decided = {}
    first = "else" if _idle(stmt.else_case) < _idle(stmt.then_case) else "then"
    for keep in (first, "then" if first == "else" else "else"):
        decided[keep] = _decide(f, stmt, keep, options)
        if isinstance(decided[keep], Proved):
            return decided[keep]
    return _neither(decided["then"], decided["else"])


def _on_canonical_form(f: n.PrimFunc, stmt: n.IfThenElse, form: CanonicalForm | OpaqueSite,
                       options: ProofOptions) -> Decision:
    """The answer for ``stmt`` of a function with a packed function's scaffolding, views
    or vectors: asked of its canonical form (:mod:`analyses.canonical`), in ``f``'s terms.

    The canonical form accesses the memory a view shares; where a view covers less
    than its memory, running the kept branch everywhere must also stay inside each
    view it accesses, which the bounds check of the function with its views decides.
    """
    target = form.stmt(stmt) if isinstance(form, CanonicalForm) else None
    if not isinstance(target, n.IfThenElse):
        return unmodelled(f, form, stmt)
    decided = form.map_back(can_remove_conditional(form.func, target, options=options))
    if isinstance(decided, Removable) and form.narrow_views:
        inner = form.unpacked_stmt(stmt)
        kept = inner.then_case if decided.keep == "then" else inner.else_case
        leaves = _out_of_bounds(inner, replace(form.unpacked, inner, kept), decided.keep)
        if isinstance(leaves, Refuted) and stmt.else_case is None:
            return leaves
        if leaves is not None:
            return Unknown(f"the {decided.keep} branch may not replace the statement: "
                           f"{leaves}; the other branch was not tried")
    return decided


def _neither(keep_then: Decision, keep_else: Decision) -> Decision:
    """The answer when neither branch is proved to replace the statement: ``Refuted``
    only when both are refuted (the then branch's counterexample, its description
    saying why the else branch fails too), else ``Unknown``: a branch not refuted
    might still replace it."""
    if isinstance(keep_then, Refuted) and isinstance(keep_else, Refuted):
        cex = keep_then.counterexample
        return Refuted(dataclasses.replace(
            cex, description=f"{cex.description}; keeping the else branch instead: "
                             f"{keep_else.counterexample.description}"))
    undecided, other = ((keep_then, keep_else) if isinstance(keep_then, Unknown)
                        else (keep_else, keep_then))
    why_not = str(other.counterexample) if isinstance(other, Refuted) else other.reason
    return Unknown(f"{undecided.reason}; {why_not}")


def conditional_of(f: n.PrimFunc, stmt: n.IfThenElse | str) -> n.IfThenElse:
    """The ``IfThenElse`` that ``stmt`` names: itself, or the one ``if`` in block ``stmt``."""
    if isinstance(stmt, str):
        block = find_block(f, stmt)
        ifs = [x for x in walk(block.body) if isinstance(x, n.IfThenElse)]
        if len(ifs) != 1:
            raise NotFoundError(f"block {stmt!r} holds {len(ifs)} conditionals, not one; "
                                "pass the IfThenElse itself")
        return ifs[0]
    if not isinstance(stmt, n.IfThenElse):
        raise TypeError(f"can_remove_conditional: stmt must be an IfThenElse or a block name, "
                        f"not {type(stmt).__name__}")
    if not any(x is stmt for x in walk(f.body)):
        raise NotFoundError(f"the conditional `if {show(stmt.condition)}` is not in {f.name}")
    return stmt


def _decide(f: n.PrimFunc, stmt: n.IfThenElse, keep: str, options: ProofOptions, *,
            wrap: bool = True) -> Decision:
    """Whether branch ``keep`` may replace ``stmt``: in bounds first, then the same effect.

    An ``if`` without else whose body would leave a buffer gets a second
    chance with the leaving indices wrapped (``wrap``; see :func:`_wrapped`).
    """
    kept = stmt.then_case if keep == "then" else stmt.else_case
    everywhere = replace(f, stmt, kept)  # the kept branch run everywhere
    leaves = _out_of_bounds(stmt, everywhere, keep)
    if leaves is not None:
        if wrap and stmt.else_case is None:
            return _wrapped(f, stmt, options, leaves, everywhere)
        return leaves
    padding = _reads_padding(f, stmt, keep, everywhere)
    if padding is not None:
        return padding
    if stmt.else_case is None:
        return _overcompute(f, stmt, options, everywhere)
    return _branch_for_both(f, stmt, keep, options)


def _out_of_bounds(stmt: n.IfThenElse, everywhere: n.PrimFunc, keep: str) -> Decision | None:
    """Why running branch ``keep`` everywhere would (or may) leave a buffer, or ``None``.

    Overcompute runs a branch where its condition used to keep it from
    reading ``B[i - 1]`` at ``i = 0``: every access must stay inside its
    buffer, or the removal is refused before any value is compared.  Only
    the kept branch runs anywhere new, so only its accesses are checked
    (every other statement runs where, and as, it did).  An access that
    cannot be decided there is ``Unknown``, even when it could not be decided
    under the condition either: the condition may be what kept it inside
    (``if 0 <= idx[i] < 10: B[idx[i]] = ...``).
    """
    kept = stmt.then_case if keep == "then" else stmt.else_case
    after = check_bounds(everywhere, within=kept)
    if isinstance(after, Proved):
        return None
    if isinstance(after, Refuted):
        cex = after.counterexample
        return Refuted(Counterexample(
            f"running the {keep} branch everywhere leaves a buffer: {cex.description}",
            instances=cex.instances, element=cex.element, params=cex.params,
            values=cex.values))
    return Unknown(f"running the {keep} branch everywhere may leave a buffer: {after.reason}")


def _wrapped(f: n.PrimFunc, stmt: n.IfThenElse, options: ProofOptions, leaves: Decision,
             everywhere: n.PrimFunc) -> Decision:
    """``leaves`` (the bounds refusal of ``if c: body``), unless the body with its leaving
    indices wrapped modulo their extents (:mod:`analyses.wrap_indices`, which proves the
    wrapped ``if`` does what ``stmt`` does) may replace ``stmt``: then ``Removable``
    with that body as ``replacement``.

    The wrapped conditional is decided by the same rules (bounds, padding
    reads, no-op where ``c`` is false).  Where there is nothing to wrap the
    refusal is returned as it was; where a wrap was tried and is not
    proved removable, the refusal keeps its counterexample and its
    description adds why the wrap did not help.
    """
    if isinstance(leaves, Refuted) and leaves.counterexample.element is not None:
        # The access found outside must itself be wrapped, and only the buffers the
        # body stores to are: a read past another buffer ends the attempt at once.
        stored = {x.buffer.name for x in walk(stmt.then_case) if isinstance(x, n.BufferStore)}
        if leaves.counterexample.element.buffer not in stored:
            return leaves
    attempt = wrap_leaving_indices(f, stmt, everywhere=everywhere)
    if isinstance(attempt, Unknown):
        return leaves  # nothing to wrap: today's answer, unchanged
    # Only a proof changes the answer (a refusal keeps the counterexample of `leaves`),
    # so the wrapped question seeks none: no counterexample search, no run.
    decided = _decide(attempt.func, attempt.conditional, "then", options.proofs_only(),
                      wrap=False)
    if isinstance(decided, Proved):
        return Removable(decided.method, f"{attempt.describe()}; {decided.detail}",
                         keep="then", replacement=attempt.then_case, rebuilt=attempt.rebuilt)
    note = f"; with {attempt.describe()}, still not removable: {decided}"
    if isinstance(leaves, Refuted):
        cex = leaves.counterexample
        return Refuted(dataclasses.replace(cex, description=cex.description + note))
    return Unknown(leaves.reason + note)


def _reads_padding(f: n.PrimFunc, stmt: n.IfThenElse, keep: str,
                   everywhere: n.PrimFunc) -> Decision | None:
    """Why running branch ``keep`` everywhere would (or may) read padding with no known
    value, or ``None``.

    The RFC 0077 review: without a pad_value no transformation may introduce a
    read of the padding, whatever the values would make of it
    (:mod:`analyses.padding_reads`; only buffers that record padding count).
    """
    kept = stmt.then_case if keep == "then" else stmt.else_case
    # Only the kept branch runs where it did not: without a load of padding it reads
    # none (an if/else's branches store the same elements, so the reads elsewhere
    # are reached as before).
    if not any(isinstance(x, n.BufferLoad) and x.buffer.padding is not None
               for x in walk(kept)):
        return None
    return introduced_padding_read(f, everywhere,
                                   f"running the {keep} branch everywhere")


# ---------------------------------------------------------------- no else: overcompute


def _overcompute(f: n.PrimFunc, stmt: n.IfThenElse, options: ProofOptions,
                 everywhere: n.PrimFunc) -> Decision:
    copy = fresh_copy(stmt.then_case)
    both = n.IfThenElse(stmt.condition, stmt.then_case, copy, span=stmt.span)
    g = replace(f, stmt, both)
    where = f"where not ({show(stmt.condition)})"
    # Where a run follows an Unknown, the prover need not look for a counterexample at
    # earlier instances when its first needs a value it does not track.
    runs = options.counterexamples and runs_exactly(f, everywhere, cheap=True)
    decided = is_no_op(g, copy, options=options.first_counterexample_only() if runs else options)
    if isinstance(decided, Proved):
        detail = f"{where}, the body is a no-op: {decided.detail or decided.method}"
        return Removable(decided.method, detail, keep="then")
    if isinstance(decided, Unknown):
        # The rules refute one harmful instance; several together are found by a run.
        found = None if not options.counterexamples else \
            refute_by_execution(f, everywhere, f"running the body {where}")
        if found is not None:
            return Refuted(found)
        return Unknown(f"running the body {where} is not known to be a no-op: "
                       f"{decided.reason}")
    cex = decided.counterexample
    return Refuted(Counterexample(
        f"running the body {where} changes the result: {cex.description}",
        instances=cex.instances, element=cex.element, params=cex.params, values=cex.values))


# ---------------------------------------------------------------- if/else: same effect


def _branch_for_both(f: n.PrimFunc, stmt: n.IfThenElse, keep: str,
                     options: ProofOptions) -> Decision:
    """Whether branch ``keep`` does what the other one does, where the other one runs."""
    kept, other = ((stmt.then_case, stmt.else_case) if keep == "then"
                   else (stmt.else_case, stmt.then_case))
    where = (f"where not ({show(stmt.condition)})" if keep == "then"
             else f"where {show(stmt.condition)}")
    try:
        decided = _Same(f, options).stmts(kept, other, {})
    except _Mismatch as err:
        return Unknown(f"the {keep} branch may not replace the other {where}: {err}")
    if isinstance(decided, Proved):
        return Removable(decided.method, f"{where}, the {keep} branch does what the other "
                         f"does{': ' + decided.detail if decided.detail else ''}", keep=keep)
    if isinstance(decided, Unknown):
        return Unknown(f"the {keep} branch may not replace the other {where}: "
                       f"{decided.reason}")
    cex = decided.counterexample
    return Refuted(Counterexample(
        f"the {keep} branch differs from the other {where}: {cex.description}",
        instances=cex.instances, element=cex.element, params=cex.params, values=cex.values))


class _Mismatch(PolypadError):
    """The two branches do not have the same shape."""


class _Same:
    """Walks two branches in step; proves each pair of expressions equal where ``b`` runs.

    ``a`` is the candidate replacement and ``b`` the branch of ``f`` that
    runs there; ``a``'s bound variables are renamed to ``b``'s, and each
    question is asked in ``b``'s context (which holds the branch condition).
    """

    def __init__(self, f: n.PrimFunc, options: ProofOptions) -> None:
        self.f, self.options = f, options
        self.methods: set[str] = set()

    def stmts(self, a: n.Stmt, b: n.Stmt, names: dict) -> Decision:
        for x, y, where in self._pairs(a, b, names):
            decided = self._prove(x, y, where)
            if not isinstance(decided, Proved):
                return decided
            self.methods.add(decided.method)
        return Proved("+".join(sorted(self.methods)) or "structural")

    def _pairs(self, a: n.Stmt, b: n.Stmt, names: dict):
        """``(a-expression, b-expression, b-statement)`` triples that must be equal.

        Statements with no effect are left out on both sides first."""
        xs, ys = _effective(a), _effective(b)
        if len(xs) != 1 or len(ys) != 1:
            if len(xs) != len(ys):
                raise _Mismatch(f"{len(xs)} statements against {len(ys)}")
            for x, y in zip(xs, ys):
                yield from self._pairs(x, y, names)
            return
        a, b = xs[0], ys[0]
        if type(a) is not type(b):
            raise _Mismatch(f"`{_first_line(a)}` against `{_first_line(b)}`")
        match a:
            case n.For():
                if a.kind is not b.kind:
                    raise _Mismatch(f"a {a.kind.name} loop against a {b.kind.name} loop")
                yield substitute(a.min, names), b.min, b
                yield substitute(a.extent, names), b.extent, b
                yield from self._pairs(a.body, b.body, {**names, a.var: b.var})
            case n.LetStmt():
                yield substitute(a.value, names), b.value, b
                yield from self._pairs(a.body, b.body, {**names, a.var: b.var})
            case n.IfThenElse():
                yield substitute(a.condition, names), b.condition, b
                yield from self._pairs(a.then_case, b.then_case, names)
                if (a.else_case is None) != (b.else_case is None):
                    raise _Mismatch("an if with an else branch against one without")
                if a.else_case is not None:
                    yield from self._pairs(a.else_case, b.else_case, names)
            case n.BufferStore():
                if a.buffer is not b.buffer:
                    raise _Mismatch(f"a store to {a.buffer.name} against one to {b.buffer.name}")
                for x, y in zip(a.indices, b.indices):
                    yield substitute(x, names), y, b
                yield substitute(a.value, names), b.value, b
            case n.Block():
                if a.name != b.name:
                    raise _Mismatch(f"block {a.name!r} against block {b.name!r}")
                yield from self._pairs(a.body, b.body, names)
            case _:
                if not structural_equal(substitute(a, names), b):
                    raise _Mismatch(f"`{_first_line(a)}` against `{_first_line(b)}`")

    def _prove(self, x: n.Expr, y: n.Expr, where: n.Stmt) -> Decision:
        if structural_equal(x, y):
            return Proved("structural")
        ctx = context_at(self.f, where)
        # Equal where they differ only in integer indices that ISL proves equal (both
        # are evaluated at the same point, so equal indices read equal elements);
        # otherwise the question goes to the prover whole, as it is.
        pairs: list[tuple[n.Expr, n.Expr]] = []
        if (not has_undef(x) and not has_undef(y) and _index_pairs(x, y, pairs)
                and all(proved_by_isl(a.equal(b), ctx) for a, b in pairs)):
            return Proved("isl")
        if dtypes.is_bool(x.dtype):  # conditions: the same truth value
            same = logical_or(logical_and(x, y), logical_and(logical_not(x), logical_not(y)))
            return prove(same, ctx, options=self.options)
        return prove_same_value(x, y, ctx, options=self.options)


def _index_pairs(x: n.Expr, y: n.Expr, out: list) -> bool:
    """Whether ``x`` and ``y`` are the same expression but for integer index questions
    (no loads, no floats) of the same dtype; those pairs are appended to ``out``.

    Nodes that bind a variable (``Let``) must be equal as they are.
    """
    if x == y:
        return True
    if (dtypes.is_int(x.dtype) and x.dtype == y.dtype and is_index_question(x)
            and is_index_question(y)):
        out.append((x, y))
        return True
    if type(x) is not type(y) or isinstance(x, (n.Var, n.Let)):
        return False
    for name in node_fields(x):
        a, b = getattr(x, name), getattr(y, name)
        if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
            items = zip(a, b)
        else:
            items = ((a, b),)
        for p, q in items:
            if isinstance(p, n.Expr) and isinstance(q, n.Expr):
                if not _index_pairs(p, q, out):
                    return False
            elif p is not q and p != q:
                return False
    return True


def _no_effect(stmt: n.Stmt) -> bool:
    """Whether ``stmt`` only evaluates an expression that calls nothing (``T.evaluate(0)``)."""
    return isinstance(stmt, n.Evaluate) and not any(
        isinstance(x, n.Call) for x in walk(stmt.value))


def _effective(stmt: n.Stmt) -> list[n.Stmt]:
    """The statements of ``stmt`` (a sequence, flattened, or one) that have an effect."""
    if isinstance(stmt, n.SeqStmt):
        return [x for s in stmt.stmts for x in _effective(s)]
    return [] if _no_effect(stmt) else [stmt]


def _idle(stmt: n.Stmt) -> int:
    """How many statements with no effect ``stmt`` holds."""
    return sum(_no_effect(x) for x in walk(stmt) if isinstance(x, n.Stmt))


def _first_line(stmt: n.Stmt) -> str:
    text = show(stmt).strip().splitlines()
    return text[0] if text else type(stmt).__name__
