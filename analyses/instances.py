"""Statement instances as the deciders see them: times, scopes, labels, points.

Shared by :mod:`.dataflow`, :mod:`.merge` and :mod:`.no_op` (and the
schedule primitives, which name statements the same way):

* :func:`program_times` — the model's 2d+1 schedule with every sequence
  position doubled, so that extra events (the end of an allocation, the
  function's return) fit between statements at odd positions;
* :func:`allocation_scopes` — where each ``Allocate`` opens and closes, as a
  range of the model's statements;
* :func:`buffer_box` — every element of a buffer, ``0 <= e_k < shape_k``;
* :func:`labels` — the name of each statement in evidence and in the
  arguments of schedule primitives;
* :func:`instance` / :func:`point_coordinates` — an ISL point back to a
  named :class:`~analyses.evidence.Instance`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import islpy as isl

from polypad.ir import nodes as n
from polypad.ir.naming import Names
from polypad.isl_failure import DIVISIONS_REFUSED, rise_unless_expected
from polypad.model import AffineSpace, Model, StatementModel, isl_helpers, to_set
from polypad.model.nest import is_leaf

from .evidence import Instance


def depth_of(model: Model) -> int:
    """The deepest loop nesting of any statement of ``model``."""
    return max((len(s.loop_vars) for s in model.statements), default=0)


def time_map(space: AffineSpace, prefix: list, depth: int, domain: isl.Set) -> isl.Map:
    """``space -> [prefix..., 0...]`` of length ``2 * depth + 1``, on ``domain``.

    ``prefix`` holds ints (constant entries) and ``Var`` s (dims of ``space``).
    """
    return isl_helpers.time_map(space, prefix, domain, 2 * depth + 1)


def statement_time(s: StatementModel, depth: int) -> isl.Map:
    """The time of each instance of ``s``: program order, sequence positions doubled."""
    prefix: list = [2 * s.position[0]]
    for level, var in enumerate(s.loop_vars):
        prefix += [var, 2 * s.position[level + 1]]
    return time_map(s.space, prefix, depth, s.domain)


def program_times(model: Model) -> dict[str, isl.Map]:
    """:func:`statement_time` of every statement, by ISL tuple name."""
    depth = depth_of(model)
    return {s.name: statement_time(s, depth) for s in model.statements}


@dataclass(frozen=True)
class Scope:
    """An ``Allocate``: its buffer, its loop depth and the statements inside it."""

    buffer: n.Buffer
    depth: int
    first: int  # index of the first statement of the model inside the scope
    stop: int  # one past the last


def allocation_scopes(body: n.Stmt) -> list[Scope]:
    """Every ``Allocate`` under ``body``, with the range of leaf statements it holds.

    Leaves are counted in the order :func:`polypad.model.extract` numbers
    its statements, so ``model.statements[scope.first:scope.stop]`` are the
    statements inside the scope.
    """
    found = _scan(body, lambda node: isinstance(node, n.Allocate))
    return [Scope(node.buffer, depth, first, stop) for node, depth, first, stop in found]


def leaf_range(body: n.Stmt, target: n.Stmt) -> tuple[int, int] | None:
    """The model statements ``first:stop`` under ``target`` (found by identity).

    ``None`` when ``target`` is not under ``body``; a ``ValueError`` when the
    same node object sits at two places (then "this statement" is ambiguous).
    """
    found = _scan(body, lambda node: node is target)
    if len(found) > 1:
        raise ValueError("the statement occurs at several places")
    return (found[0][2], found[0][3]) if found else None


def _scan(body: n.Stmt, want) -> list[tuple[n.Stmt, int, int, int]]:
    """``(node, loop depth, first leaf, stop leaf)`` for each node ``want`` accepts."""
    out: list[tuple[n.Stmt, int, int, int]] = []
    count = 0

    def visit(stmt: n.Stmt, depth: int) -> None:
        nonlocal count
        first = count
        match stmt:
            case n.SeqStmt(stmts=stmts):
                for s in stmts:
                    visit(s, depth)
            case n.For(body=body):
                visit(body, depth + 1)
            case n.IfThenElse(then_case=then, else_case=other):
                visit(then, depth)
                if other is not None:
                    visit(other, depth)
            case (n.LetStmt(body=body) | n.Block(body=body) | n.Allocate(body=body)
                  | n.DeclBuffer(body=body)):
                visit(body, depth)
            case _ if is_leaf(stmt):
                count += 1
        if want(stmt):
            out.append((stmt, depth, first, count))

    visit(body, 0)
    return out


def buffer_box(model: Model, buffer: n.Buffer) -> isl.Set:
    """``{ Buf[e0, ...] : 0 <= e_k < shape_k }`` (shape variables are parameters)."""
    dims = tuple(n.Var(f"e{k}") for k in range(len(buffer.shape)))
    space = AffineSpace(dims, tuple_name=model.buffer_name(buffer), names=model.names)
    box = space.universe
    for var, extent in zip(dims, buffer.shape, strict=True):
        size = extent if isinstance(extent, n.Var) else n.IntImm(int(extent))
        box = box.intersect(to_set(n.And(var >= 0, var < size), space))
    return box


def labels(model: Model) -> dict[str, str]:
    """The label of every statement of ``model``, by its model name ``S<k>``.

    A statement is named after its innermost block: the block's name when the
    block holds only that statement, else ``<block>_<k>``, ``k`` counting the
    block's statements in program order (``compute_0``, ``compute_1``).  A
    statement in no block keeps its model name ``S<k>``.  Evidence and the
    schedule primitives (``distribute``, ``reorder_by_map``) use the same
    labels, so a name read in an error message can be passed to a primitive.
    Labels are identifiers (they are tuple names in ISL text); the few that
    would clash (a block called ``S2``) fall back to model names.
    """
    by_block: dict[str, list[StatementModel]] = {}
    for s in model.statements:
        if s.block is not None:
            by_block.setdefault(s.block, []).append(s)
    out = {s.name: s.name for s in model.statements}
    for block, members in by_block.items():
        base = Names().sanitize(block)
        for k, s in enumerate(members):
            out[s.name] = base if len(members) == 1 else f"{base}_{k}"
    while True:
        # Model names are unique, so each round shrinks the clashes until none is left.
        count = Counter(out.values())
        clashing = [name for name, text in out.items() if count[text] > 1 and name != text]
        if not clashing:
            return out
        for name in clashing:
            out[name] = name


def label(model: Model, s: StatementModel) -> str:
    """How evidence and schedule primitives name ``s`` (see :func:`labels`)."""
    return labels(model)[s.name]


def dim_names(space: isl.Space | isl.Set) -> list[str]:
    """The set-dimension names of ``space``."""
    count = space.dim(isl.dim_type.set)
    return [space.get_dim_name(isl.dim_type.set, k) for k in range(count)]


def point_coordinates(point: isl.Point) -> tuple[list[int], dict[str, int]]:
    """The set coordinates and the named parameters of ``point``."""
    space = point.get_space()
    coords = [
        point.get_coordinate_val(isl.dim_type.set, k).to_python()
        for k in range(space.dim(isl.dim_type.set))
    ]
    params = {
        space.get_dim_name(isl.dim_type.param, k):
            point.get_coordinate_val(isl.dim_type.param, k).to_python()
        for k in range(space.dim(isl.dim_type.param))
    }
    return coords, params


def instance(model: Model, s: StatementModel, values) -> Instance:
    """The :class:`Instance` of ``s`` at loop counters ``values`` (outer to inner)."""
    names = dim_names(s.space.space)
    return Instance(label(model, s), dict(zip(names, (int(v) for v in values), strict=True)))


def first_point(umap: isl.UnionMap) -> isl.Point | None:
    """The lexicographically smallest pair of ``umap`` (its first space in name order)."""
    found: list[isl.Map] = []
    umap.foreach_map(found.append)
    maps = sorted(found, key=lambda m: str(m.get_space()))
    for m in maps:
        if m.is_empty():
            continue
        point = safe_lexmin(m.wrap()).sample_point()
        if not point.is_void():
            return point
    return None


def safe_lexmin(s: isl.Set) -> isl.Set:
    """``s.lexmin()``, or a non-empty subset of ``s`` where ISL gets that wrong.

    ISL's lexicographic optimum is unreliable on some sets with integer
    divisions: it has raised "affine expression involves some of the domain
    dimensions" on wrapped tagged relations, and returned an empty set for
    the non-empty ``{ [i, i3] : (1 + i) mod 2 = 0 and (2 + i3) mod 4 = 0 and
    0 <= i <= 3 and 0 <= i3 <= 3 and 4*floor((1 - i)/4) <= -i }`` as a
    dataflow answer built it (read back from its text, the same set is
    fine).  So each answer is checked -- inside ``s``, and empty only when
    ``s`` is -- and the same set with its equalities made explicit, then read
    back from its text, is tried next.  Failing all three, ``s`` itself is
    returned: any point of it is a counterexample, if not the first.
    """
    nonempty = not s.is_empty()
    for attempt in (lambda: s, s.detect_equalities, lambda: isl.Set(str(s))):
        try:
            found = attempt().lexmin()
        except isl.Error as err:
            rise_unless_expected(err, DIVISIONS_REFUSED)  # the known refusal: next form
            continue
        if found.is_empty() != nonempty and found.is_subset(s):
            return found
    return s
