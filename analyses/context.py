"""What is known at a program point: ``context_at(f, stmt)``.

The context just before ``stmt`` runs holds

* the ranges of the enclosing loops and the conditions of the enclosing
  ``if`` branches (the *domain*: an ``isl.Set`` over the loop counters, with
  scalar parameters as ISL parameters);
* enclosing ``let`` bindings;
* integer ``T.assume`` facts that ran earlier (``T.assume(0 <= n < 8)``),
  folded into the domain exactly: an instance whose past holds a violated
  assumption cannot run;
* facts about buffer contents: earlier ``T.assume`` statements that read
  buffers and the values earlier stores wrote, both universally quantified
  over their loop instances and instantiated by :mod:`analyses.facts` at the
  buffer loads of each question.

Program order and the statements' sites are :mod:`.program`'s; the facts
are :mod:`.facts`' and :mod:`.path_facts`'.  Values the context proves equal
to a load come from :func:`analyses.prover.known_value`, a level up.

A fact that reads a buffer element holds only until that element is written
again (the review notes' rule; storing ``T.undef()`` is such a write, and so
is a fresh ``T.alloc_buffer`` allocation).  A condition on data, such as
``if A[0] == B[0]``, is a fact of the same kind, established when the ``if``
ran.

>>> ctx = analyses.context_at(f, store)
>>> known_value(B[0], ctx)           # FloatImm(0.0) under T.assume(B[0] == 0.0)
>>> analyses.prove(n // 8 == 0, ctx)  # Proved('isl')
"""

from __future__ import annotations

from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.deep import deep_entry
from polypad.ir.naming import Names
from polypad.ir.show import show
from polypad.model import AffineSpace, set_to_condition, to_set
from polypad.model.overflow import set_ranges, wraps_somewhere

from .budgeted import bounded
from .facts import FactInstance, Instantiator, KeptConstants
from .history import element_history
from .path_facts import int_assume_facts, path_premises
from .program import Program, Site, _label, program_of

__all__ = ["Context", "Program", "Site", "context_at", "context_of", "program_of"]


def context_of(program: Program, site: Site) -> Context:
    """The (cached) context just before ``site`` of ``program``."""
    return program.memo(("context", site.index), lambda: Context(program, site))


@deep_entry
@bounded
def context_at(f: n.PrimFunc, stmt: n.Stmt) -> Context:
    """The context at the point just before ``stmt`` (found by identity in ``f``) runs.

    >>> ctx = context_at(f, store)
    >>> prove(4 * io + ii < 16, ctx)      # Proved('isl')
    """
    from polypad.arguments import expect
    expect(stmt, n.Stmt, "stmt", "context_at", what="a statement (Stmt) of f")
    program = program_of(f)
    return context_of(program, program.site_of(stmt))


class Context:
    """Facts that hold just before a statement runs; see the module docstring.

    ``loop_vars`` are the enclosing loop counters (outer first), ``domain``
    the ``isl.Set`` of their values (parameters for scalars) allowed by the
    loops, affine branch conditions and integer assumptions, ``conditions``
    the branch conditions as IR, and ``premises`` the facts only Z3 can use
    (conditions on data, lets), each already weakened where a later write
    may have broken it.
    """

    def __init__(self, program: Program | None, site: Site | None, *,
                 extra: tuple[n.Expr, ...] = (), base: Context | None = None) -> None:
        self.program, self.site = program, site
        if base is not None:
            self.space, self.domain = base.space, base.domain
            self._premises, self._instantiator = list(base._premises), base._instantiator
            self.conditions = base.conditions
        elif program is None:
            self.space = AffineSpace(())
            self.domain = self.space.universe
            self._premises, self._instantiator = [], None
            self.conditions = ()
        else:
            self.space = program.space(site)
            domain, dropped = program.domain(site)
            domain, z3_facts = int_assume_facts(program, site, domain)
            self.domain = domain
            self._premises = path_premises(program, site, dropped) + z3_facts
            self._instantiator = Instantiator(program, site)
            self.conditions = tuple(
                s.condition if then else n.Not(s.condition) for s, then in site.guards)
        for cond in extra:
            try:
                if wraps_somewhere(cond, self.space, self.domain):
                    raise NotAffineError("it may wrap around", cond)
                self.domain = self.domain.intersect(to_set(cond, self.space))
            except NotAffineError:
                self._premises.append(cond)
        if extra:
            self.conditions = (*self.conditions, *extra)

    @classmethod
    def empty(cls) -> Context:
        """No loops, no facts: every free variable ranges over all values."""
        return cls(None, None)

    @property
    def func(self) -> n.PrimFunc | None:
        """The function the point is in (None for the empty context)."""
        return self.program.func if self.program is not None else None

    @property
    def stmt(self) -> n.Stmt | None:
        """The statement the point is just before."""
        return self.site.stmt if self.site is not None else None

    @property
    def loop_vars(self) -> tuple[n.Var, ...]:
        """The counters of the enclosing loops, outer first."""
        return self.site.loop_vars if self.site is not None else ()

    @property
    def names(self) -> Names:
        """ISL parameter names <-> IR variables for this context's sets."""
        return self.space.names

    @property
    def label(self) -> str:
        """How counterexamples name the statement."""
        return _label(self.stmt) if self.stmt is not None else "query"

    @property
    def premises(self) -> tuple[n.Expr, ...]:
        """Facts for Z3 beyond the domain: conditions on data, lets, extra conditions."""
        return tuple(self._premises)

    def with_condition(self, cond: n.Expr) -> Context:
        """This context with ``cond`` also known to hold (e.g. the branch not taken)."""
        return Context(self.program, self.site, extra=(cond,), base=self)

    def domain_condition(self) -> n.Expr:
        """The domain as one IR condition over the loop counters and parameters."""
        if getattr(self, "_domain_ir", None) is None:
            self._domain_ir = set_to_condition(self.domain, self.loop_vars, self.names)
        return self._domain_ir

    @property
    def instantiator(self) -> Instantiator | None:
        """The buffer facts that may hold here (None for the empty context)."""
        return self._instantiator

    def var_ranges(self) -> dict:
        """The ranges of the loop counters and parameters over the domain (memoized)."""
        if getattr(self, "_var_ranges", None) is None:
            self._var_ranges = set_ranges(self.domain, self.loop_vars, self.names)
        return self._var_ranges

    def facts_for(self, load: n.BufferLoad, *,
                  kept: KeptConstants | None = None) -> list[FactInstance]:
        """The buffer facts of this context instantiated at ``load`` (see :mod:`.facts`),
        with the stored constants ``kept`` finds when given."""
        if self._instantiator is None:
            return []
        return self._instantiator.facts_for(load, self.domain, kept=kept)

    def has_assumptions(self) -> bool:
        """Whether a ``T.assume`` about buffer contents may hold here."""
        if self._instantiator is None:
            return False
        return any(f.kind == "assume" for f in self._instantiator.facts())

    def history(self, load: n.BufferLoad, values: dict, element) -> tuple[list[str], str]:
        """Earlier writers of ``element`` of ``load``'s buffer, and what is known of its value.

        ``values`` gives the loop counters and parameters of the point (see
        :func:`analyses.history.element_history`).
        """
        if self._instantiator is None:
            return [], "input"
        return element_history(self._instantiator, load, values, element)

    def __repr__(self) -> str:
        if self.site is None:
            return "Context(empty)"
        lines = [f"Context before `{self.label}` in {self.program.func.name}:"]
        loops = [f"{show(lo.min)} <= {lo.var.name} < {show(lo.min + lo.extent)}"
                 if not (isinstance(lo.min, n.IntImm) and lo.min.value == 0)
                 else f"0 <= {lo.var.name} < {show(lo.extent)}" for lo in self.site.loops]
        if loops:
            lines.append("  loops: " + ", ".join(loops))
        lines += [f"  if: {show(c)}" for c in self.conditions]
        lines.append(f"  domain: {self.domain}")
        lines += [f"  premise: {show(p)}" for p in self._premises]
        if self._instantiator is not None:
            lines += [f"  {fact}" for fact in self._instantiator.describe()]
        return "\n".join(lines)
