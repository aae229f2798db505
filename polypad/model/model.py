"""The polyhedral model of a function: statements, accesses, schedule.

Built by :func:`polypad.model.extract`.  Statement tuples are named ``S0``,
``S1``, ... in program order over the whole function (block names are kept
in :attr:`StatementModel.block`, not in the tuple name, so that the names
stay valid ISL identifiers and predictable in hand-written sets).  Buffer
tuples are named after the buffers (``A``, or ``A_1`` when two buffers share
a name); scalar parameters are ISL parameters named after the variables.

>>> m = extract(f)
>>> m.statements[0].domain         # { S0[i] : 0 <= i <= 13 }
>>> m.writes()                     # { S0[i] -> B[i] : 0 <= i <= 13 }
>>> m.schedule                     # { S0[i] -> [0, i, 0] : 0 <= i <= 13 }
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.naming import Names

from .affine import AffineSpace
from .isl_helpers import union_all, union_sets

#: The ISL tuple of the pseudo-location that keeps stores and asserts in order
#: (:mod:`analyses.assert_order`); no buffer is given this name.
ASSERT_ORDER = "assert_order"


@dataclass(eq=False)
class Access:
    """One buffer access of a statement.

    ``relation`` maps the statement's instances to the elements touched
    (``S0[i, j] -> A[i, j // 4]``), restricted to the instances where the
    access happens when that is known exactly.  ``may`` is True when the
    relation may over-approximate: the statement's domain dropped a guard, or
    the access sits under a data-dependent ``T.if_then_else`` condition.

    ``gathered`` holds the loads its indices read (``X[i]`` of ``A[X[i]]``) in a
    model built by :func:`polypad.model.extract_gathers`, which over-approximates
    such an axis by the buffer's whole extent (``may`` is then True); empty in a
    plain :func:`~polypad.model.extract`, which refuses them.
    """

    kind: str  # "read" or "write"
    buffer: n.Buffer
    indices: tuple[n.Expr, ...]
    node: n.BufferLoad | n.BufferStore
    relation: isl.Map
    may: bool = False
    gathered: tuple[n.BufferLoad, ...] = ()


@dataclass(eq=False)
class StatementModel:
    """One leaf statement (a ``BufferStore``, ``T.assume`` or plain ``assert``) and its
    instances.

    ``domain`` holds the instances: loop bounds and the affine ``if`` guards
    around the statement (an else-branch contributes the negation).  When a
    guard or bound is not affine it is dropped, ``may`` is True (the domain
    over-approximates) and the dropped condition is in ``dropped_guards``.
    ``guards`` lists every enclosing condition as it holds at the statement.
    ``space`` converts further expressions of this statement (its loop vars
    as dims, its let bindings, the model's parameter names).
    """

    name: str
    stmt: n.BufferStore | n.Evaluate | n.Assert
    loop_vars: tuple[n.Var, ...]
    loops: tuple[n.For, ...]
    domain: isl.Set
    may: bool
    dropped_guards: tuple[n.Expr, ...]
    guards: tuple[n.Expr, ...]
    accesses: tuple[Access, ...]
    block: str | None
    lets: dict
    space: AffineSpace
    time: isl.Map  # this statement's part of Model.schedule
    position: tuple[int, ...]  # sequence position at each loop level

    @property
    def reads(self) -> isl.UnionMap:
        """``S[...] -> Buffer[...]`` for every element this statement may read."""
        return union_all(a.relation for a in self.accesses if a.kind == "read")

    @property
    def writes(self) -> isl.UnionMap:
        """``S[...] -> Buffer[...]`` for every element this statement writes."""
        return union_all(a.relation for a in self.accesses if a.kind == "write")

    @property
    def is_assume(self) -> bool:
        """Whether this is a ``T.assume``: a fact, with no effect."""
        return isinstance(self.stmt, n.Evaluate)

    @property
    def is_assert(self) -> bool:
        """Whether this is an ``assert``: a check that may raise, which writes nothing
        (its order against the stores is kept by :mod:`analyses.dataflow`)."""
        return isinstance(self.stmt, n.Assert)

    @property
    def is_store(self) -> bool:
        """Whether this is a ``BufferStore``."""
        return isinstance(self.stmt, n.BufferStore)

    def __repr__(self) -> str:
        return f"StatementModel({self.name}: {self.domain})"


@dataclass(eq=False)
class Model:
    """Statements, accesses and schedule of one ``PrimFunc``."""

    func: n.PrimFunc
    statements: tuple[StatementModel, ...]
    schedule: isl.UnionMap
    params: tuple[n.Var, ...]
    names: Names  # IR variables <-> ISL parameter names
    buffer_names: Names  # buffers <-> ISL tuple names
    tree: list = field(repr=False, default_factory=list)  # nest.LoopItem / LeafItem

    def reads(self) -> isl.UnionMap:
        """Every statement's read relation, as one union map."""
        return union_all(s.reads for s in self.statements)

    def writes(self) -> isl.UnionMap:
        """Every statement's write relation, as one union map."""
        return union_all(s.writes for s in self.statements)

    def __repr__(self) -> str:
        parts = "; ".join(str(s.domain) for s in self.statements)
        if len(parts) > 300:
            parts = parts[:297] + "..."
        return f"Model({self.func.name}: {len(self.statements)} statements: {parts})"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: a table of the statements and a picture of their instances.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import model_html

        return model_html(self)

    def domain(self) -> isl.UnionSet:
        """Every statement's instances, as one union set."""
        return union_sets(s.domain for s in self.statements)

    def schedule_tree(self) -> isl.Schedule:
        """An ISL schedule tree in program order: a band per loop, a sequence per block."""
        from .program_order import schedule_tree

        return schedule_tree(self)

    def statement(self, name: str) -> StatementModel:
        """The statement whose ISL tuple is ``name``."""
        for s in self.statements:
            if s.name == name:
                return s
        raise PolypadError(f"the model of {self.func.name} has no statement {name!r}")

    def buffer(self, name: str) -> n.Buffer:
        """The buffer whose ISL tuple is ``name``."""
        found = self.buffer_names.lookup(name)
        if found is None:
            raise PolypadError(f"the model of {self.func.name} has no buffer {name!r}")
        return found

    def buffer_name(self, buffer: n.Buffer) -> str:
        """The ISL tuple name of ``buffer``."""
        return self.buffer_names.name(buffer)
