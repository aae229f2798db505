"""The part of a function a reschedule works on: a block, its statements and items,
and what sits around it.

A :class:`Scope` is a block (or the whole function body) with its leaf
statements, labelled as evidence labels them (:func:`analyses.instances.labels`:
``compute`` for the one statement of block ``compute``, ``compute_0``,
``compute_1``, ... for several, ``S<k>`` outside blocks), and its *items*: the
top-level statements of its body, looking through ``SeqStmt``, ``Allocate``
and nested ``Block`` s.  An item is the unit a reorder regenerates.

A block may sit inside loops (and ``if`` s and lets).  A reschedule leaves
those *enclosing* loops as they are and holds their counters fixed: it only
reorders what runs inside the block at one iteration of them.  The times it
builds therefore start with the enclosing counters (:mod:`.reschedule_plan`),
and the loops it regenerates see them as ISL parameters (:func:`lift`) under
what the enclosing loops and guards guarantee (:meth:`Scope.context`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import islpy as isl

from polypad.errors import NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import ancestors, find_block
from polypad.ir.visitor import walk
from polypad.model import AffineSpace, Model, StatementModel, extract
from polypad.model.domains import statement_domain
from polypad.model.nest import Guard, Leaf


@dataclass(eq=False)
class Scope:
    """A block (``block`` None: the function body), its statements and items, and the
    loops, guards and lets around it."""

    func: n.PrimFunc
    model: Model
    block: n.Block | None
    statements: list[StatementModel]  # in program order
    labels: dict[str, StatementModel]
    items: list[n.Stmt]
    item_of: dict[str, int]  # statement name -> index in items
    outer: tuple[n.For, ...] = ()  # the loops around the block, outermost first
    outer_guards: tuple[Guard, ...] = ()
    outer_lets: dict = field(default_factory=dict)
    # label of a statement -> the label of the block that moves it whole
    # (:mod:`.reschedule_blocks`): the statement cannot be named alone.
    moved_whole: dict[str, str] = field(default_factory=dict)
    # The block's axes (``vi = T.axis.spatial(8, i)``): lets of the enclosing counters
    # that stay at the head of the block, around whatever is rebuilt under them.
    axes: tuple[n.LetStmt, ...] = ()

    @property
    def fixed(self) -> int:
        """How many loops around the block a reschedule holds fixed."""
        return len(self.outer)

    @property
    def outer_vars(self) -> tuple[n.Var, ...]:
        return tuple(loop.var for loop in self.outer)

    @property
    def body(self) -> n.Stmt:
        if self.axes:
            return self.axes[-1].body
        return self.func.body if self.block is None else self.block.body

    @property
    def title(self) -> str:
        return f"block {self.block.name!r}" if self.block is not None else "the function body"

    def label(self, s: StatementModel) -> str:
        """The user-facing name of ``s``: ``compute``, ``compute_0``, ``S2``..."""
        return next(k for k, v in self.labels.items() if v is s)

    def lookup(self, ref: str | int) -> StatementModel:
        """The statement a caller names by label or by index within the scope."""
        if isinstance(ref, int) and not isinstance(ref, bool):
            if 0 <= ref < len(self.statements):
                return self.statements[ref]
        elif ref in self.labels:
            return self.labels[ref]
        elif ref in self.moved_whole:
            block = self.moved_whole[ref]
            raise PolypadError(f"{ref} is a statement of block {block!r}, which moves whole "
                               f"with its other statements: name the block ({block}[...])")
        known = ", ".join(self.labels) or "none"
        raise NotFoundError(f"no statement {ref!r} in {self.title}; statements: {known}")

    def item_statements(self, index: int) -> list[StatementModel]:
        return [s for s in self.statements if self.item_of[s.name] == index]

    def context(self) -> tuple[isl.Set, tuple[n.Expr, ...]]:
        """What holds of the enclosing loop counters wherever the block runs, as a
        parameter set (see :func:`lift`), and the conditions around the block that
        it leaves out because they are not affine.

        Built from the enclosing loops and guards themselves, not from the
        statements' domains: those project onto the iterations where some
        statement runs, and a context smaller than where the block runs would let
        ISL drop a guard that the block still needs.
        """
        leaf = Leaf(None, self.outer, self.outer_guards, self.outer_lets, None, ())
        space = AffineSpace(self.outer_vars, lets=self.outer_lets, names=self.model.names)
        domain, dropped = statement_domain(leaf, space)
        return lift(domain, self.outer_vars, self.model).params(), dropped


def scope_of(func: n.PrimFunc, block: str | n.Block | None) -> Scope:
    """The :class:`Scope` of ``block`` (a name, a node, or None for the body) in ``func``."""
    from analyses.instances import labels  # analyses imports polypad: not at import time

    node = None
    if block is not None:
        node = find_block(func, block if isinstance(block, str) else block.name)
    model = extract(func)
    body = func.body if node is None else node.body
    axes = _axes(node) if node is not None else ()
    inside = {id(x) for x in walk(body)}
    statements = [s for s in model.statements if id(s.stmt) in inside]
    named = labels(model)
    scope_labels = {named[s.name]: s for s in statements}
    items = flatten_items(axes[-1].body if axes else body)
    item_of = {}
    for index, item in enumerate(items):
        under = {id(x) for x in walk(item)}
        for s in statements:
            if id(s.stmt) in under:
                item_of[s.name] = index
    loops, guards, lets = _around(func, node) if node is not None else ((), (), {})
    lets.update((let.var, let.value) for let in axes)
    return Scope(func, model, node, statements, scope_labels, items, item_of,
                 loops, guards, lets, axes=axes)


def _axes(block: n.Block) -> tuple[n.LetStmt, ...]:
    """The leading lets of ``block`` that bind its axes (none without a header)."""
    count = len(block.header.axes) if block.header is not None else 0
    out, node = [], block.body
    while len(out) < count and isinstance(node, n.LetStmt):
        out.append(node)
        node = node.body
    return tuple(out)


def _around(func: n.PrimFunc, node: n.Stmt) -> tuple[tuple, tuple, dict]:
    """The loops, guards and lets on the way from the function body down to ``node``."""
    path = ancestors(func, node)
    loops, guards, lets = [], [], {}
    for here, below in zip(path, path[1:], strict=False):
        if isinstance(here, n.For):
            loops.append(here)
        elif isinstance(here, n.IfThenElse):
            guards.append(Guard(here.condition, below is here.then_case))
        elif isinstance(here, n.LetStmt):
            lets[here.var] = here.value
    return tuple(loops), tuple(guards), lets


def lift(obj: isl.Set | isl.Map, outer: tuple[n.Var, ...], model: Model):
    """``obj`` (a set of, or a map from, statement instances) with the first
    ``len(outer)`` counters as ISL parameters named as the model names ``outer``.

    Inside a block the enclosing counters are fixed, so ISL treats them as
    symbols, and an ISL AST over the result refers to them by the names that
    the model's parameters (:class:`polypad.ir.naming.Names`) map back to the
    loop variables.
    """
    if not outer:
        return obj
    kind = isl.dim_type.in_ if isinstance(obj, isl.Map) else isl.dim_type.set
    space = obj.get_space()
    name = space.get_tuple_name(kind) if space.has_tuple_name(kind) else None
    for k, var in enumerate(outer):
        obj = obj.set_dim_name(kind, k, model.names.name(var))
    obj = obj.move_dims(isl.dim_type.param, obj.dim(isl.dim_type.param), kind, 0, len(outer))
    # Moving dimensions out of a tuple drops its name; the statement keeps it.
    if name is None:
        return obj
    return obj.set_tuple_name(kind, name) if kind == isl.dim_type.in_ else obj.set_tuple_name(name)


def flatten_items(body: n.Stmt) -> list[n.Stmt]:
    """The top-level statements of ``body``, through ``SeqStmt``, ``Allocate`` and ``Block``."""
    if isinstance(body, n.SeqStmt):
        return [x for s in body.stmts for x in flatten_items(s)]
    if isinstance(body, (n.Allocate, n.Block)):
        return flatten_items(body.body)
    return [body]


def map_items(body: n.Stmt, fn) -> n.Stmt | None:
    """``body`` with each item replaced by ``fn(item)`` (a statement or ``None``)."""
    if isinstance(body, n.SeqStmt):
        parts = []
        for s in body.stmts:
            new = map_items(s, fn)
            if isinstance(new, n.SeqStmt):
                parts.extend(new.stmts)
            elif new is not None:
                parts.append(new)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else n.SeqStmt(tuple(parts), span=body.span)
    if isinstance(body, (n.Allocate, n.Block)):
        inner = map_items(body.body, fn)
        return None if inner is None else dataclasses.replace(body, body=inner)
    return fn(body)


__all__ = ["Scope", "flatten_items", "lift", "map_items", "scope_of"]
