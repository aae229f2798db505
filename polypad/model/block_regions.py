"""A block's regions in the model: its context, and the ``T.reads``/``T.writes`` check.

A block's regions are per *instance*: for each value of the loop counters
around it, the elements its body touches.  Both questions -- what a block
touches (:func:`analyses.block_regions.block_regions`) and whether what it
declares covers that (:func:`check_declared`) -- are put to the polyhedral
model (:func:`polypad.model.extract`) with the block cut out of its
function (:func:`block_contexts`): the loops around it become conditions
``lo <= i < lo + n`` on free counters, its enclosing ``if`` conditions and
lets stay, so the counters are parameters ranging over exactly the values
they take.

:func:`check_declared` is what the parser runs on the regions a script
declares, through :mod:`polypad.script.checks`, where the model puts it.
The declared regions are modelled as stores into stand-in buffers over each
box, next to the block in one model, so that both sets share their
parameters; a *must* access of the body (one under no dropped guard)
outside the declared regions is a :class:`~polypad.errors.ParseError` at the
``T.reads``/``T.writes`` line, naming the block, the buffer, the element and
the counters' values.  A read of an element the block writes counts as
declared (TVM's reductions declare ``C[vi, vj]`` only in ``T.writes`` and
read it in the update).  Where the model cannot decide (an index that is
not quasi-affine, or a violation only through a dropped guard) nothing is
raised: the check refuses only what it proves wrong.
"""

from __future__ import annotations

from collections.abc import Callable

import islpy as isl

from polypad.errors import NotAffineError
from polypad.ir import operators as ops
from polypad.ir.nodes import (
    Allocate,
    Assert,
    AttrStmt,
    Block,
    BoolImm,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    PrimFunc,
    Return,
    SeqStmt,
    Stmt,
    Var,
)
from polypad.ir.visitor import walk
from polypad.script.checks import Declared
from polypad.script.parse_region import Region

from .extract import extract

# ------------------------------------------------------------ context

Wrap = Callable[[Stmt], Stmt]


def block_contexts(body: Stmt) -> list[tuple[Block, Wrap, tuple[Var, ...]]]:
    """Each block under ``body`` with ``wrap`` and the counters of the loops around it.

    ``wrap(s)`` puts ``s`` in the block's context: under its lets,
    allocations and ``if`` conditions, with each enclosing loop turned into
    the condition ``lo <= i < lo + extent`` on its (then free) counter.
    """
    return stmt_contexts(body, lambda s: isinstance(s, Block))


def stmt_contexts(body: Stmt, pick: Callable[[Stmt], bool], *, free_loops: bool = True,
                  assumed: bool = False) -> list[tuple[Stmt, Wrap, tuple[Var, ...]]]:
    """Each statement under ``body`` that ``pick`` accepts, with its context.

    As :func:`block_contexts`: ``wrap(s)`` puts ``s`` where the statement
    stands; the statement itself is not part of its context.  With
    ``free_loops=False`` the enclosing loops stay loops (serial ones), so
    that their counters are the statement's instance dimensions rather
    than free parameters.  With ``assumed``, a ``T.assume(c)`` before the
    statement in a sequence around it is a fact there too (``if c:`` in
    its context), where ``c`` reads no buffer: a buffer's values may change
    between the two, the variables of ``c`` may not; so is ``assert c``, and
    what follows a ``return`` never runs.  A buffer view (``DeclBuffer``)
    stays in the context; an annotation (``T.attr``) is passed through.
    """
    out: list[tuple[Stmt, Wrap, tuple[Var, ...]]] = []
    stack: list[tuple[Stmt, Wrap, tuple[Var, ...]]] = [(body, lambda s: s, ())]
    while stack:
        s, wrap, loops = stack.pop()
        if pick(s):
            out.append((s, wrap, loops))
        if isinstance(s, Block):
            stack.append((s.body, wrap, loops))
        elif isinstance(s, For) and not free_loops:
            stack.append((s.body, _under(wrap, lambda x, s=s: For(
                s.var, s.min, s.extent, ForKind.SERIAL, x)), (*loops, s.var)))
        elif isinstance(s, For):
            cond = ops.logical_and(ops.ge(s.var, s.min), ops.lt(s.var, ops.add(s.min, s.extent)))
            stack.append((s.body, _under(wrap, lambda x, c=cond: IfThenElse(c, x)),
                          (*loops, s.var)))
        elif isinstance(s, IfThenElse):
            c = s.condition
            if s.else_case is not None:  # pushed first, popped after the then-branch
                stack.append((s.else_case, _under(
                    wrap, lambda x, c=c: IfThenElse(ops.logical_not(c), x)), loops))
            stack.append((s.then_case, _under(wrap, lambda x, c=c: IfThenElse(c, x)), loops))
        elif isinstance(s, LetStmt):
            stack.append((s.body, _under(wrap, lambda x, s=s: LetStmt(s.var, s.value, x)),
                          loops))
        elif isinstance(s, Allocate):
            stack.append((s.body, _under(wrap, lambda x, s=s: Allocate(s.buffer, x)), loops))
        elif isinstance(s, DeclBuffer):
            # A view: the model reads its accesses as its memory owner's.
            stack.append((s.body, _under(wrap, lambda x, s=s: DeclBuffer(s.buffer, x)), loops))
        elif isinstance(s, AttrStmt):
            # An annotation: it changes no value and no instance, and the model has no
            # statement for it.
            stack.append((s.body, wrap, loops))
        elif isinstance(s, SeqStmt) and assumed:
            items = []
            for t in s.stmts:
                items.append((t, wrap, loops))
                fact = _assumed(t)
                if fact is not None:
                    wrap = _under(wrap, lambda x, c=fact: IfThenElse(c, x))
            stack += reversed(items)
        elif isinstance(s, SeqStmt):
            stack += [(t, wrap, loops) for t in reversed(s.stmts)]
    return out


def _assumed(s: Stmt):
    """What holds after ``s`` in a sequence, where it reads no buffer: ``c`` of
    ``T.assume(c)`` or of ``assert c`` (the function stops where it fails), false
    after ``return`` (nothing after it runs); None when ``s`` says nothing."""
    if isinstance(s, Return):
        return BoolImm(False)
    if isinstance(s, Evaluate) and isinstance(s.value, Call) and s.value.op == "assume":
        fact = s.value.args[0]
    elif isinstance(s, Assert):
        fact = s.condition
    else:
        return None
    return None if any(isinstance(x, BufferLoad) for x in walk(fact)) else fact


def _under(outer: Wrap, inner: Wrap) -> Wrap:
    return lambda s: outer(inner(s))


def outside_buffers(block: Block) -> list[Buffer]:
    """The buffers ``block`` loads or stores that it does not allocate, in first-use order."""
    local = {id(s.buffer) for s in walk(block.body) if isinstance(s, Allocate)}
    out: list[Buffer] = []
    for node in walk(block.body):
        if isinstance(node, (BufferLoad, BufferStore)) and id(node.buffer) not in local:
            if not any(node.buffer is b for b in out):
                out.append(node.buffer)
    return out


# ------------------------------------------------------------ the check


def check_declared(src, body: Stmt, declared: list) -> None:
    """Raise a ParseError where a block's ``T.reads``/``T.writes`` miss what its body touches.

    ``declared`` holds ``(block, reads, writes)`` with :class:`Declared` (or
    None) for each block that declares either.
    """
    contexts = {id(b): (wrap, loops) for b, wrap, loops in block_contexts(body)}
    for block, reads, writes in declared:
        wrap, loops = contexts[id(block)]
        _check_block(src, block, wrap, loops, reads, writes)


def _check_block(src, block: Block, wrap: Wrap, loops: tuple[Var, ...],
                 reads: Declared | None, writes: Declared | None) -> None:
    standins: dict[tuple[int, str], Buffer] = {}
    stmts: list[Stmt] = [block]
    for decl, kind in ((reads, "read"), (writes, "write")):
        for region in decl.regions if decl is not None else ():
            key = (id(region.buffer), kind)
            if key not in standins:
                b = region.buffer
                standins[key] = Buffer(b.name, b.shape, b.dtype)
            stmts.append(_box(standins[key], region, decl.bindings))
    try:
        model = extract(PrimFunc("block", (), wrap(SeqStmt(tuple(stmts)))))
    except NotAffineError:
        return  # undecided: refuse nothing
    sets = _touched(model)
    # The counters in the message: outer loop first, then any other parameter.
    order = [model.names.name(v) for v in loops]
    for buffer in outside_buffers(block):
        body_writes = sets.get((id(buffer), "write"))
        if writes is not None:
            declared = _region_set(sets, standins, buffer, "write")
            _require(src, block, buffer, body_writes, declared, writes, "writes", order)
        if reads is not None:
            covered = _region_set(sets, standins, buffer, "read")
            if writes is not None:
                covered = _union(covered, _region_set(sets, standins, buffer, "write"))
            elif body_writes is not None:
                covered = _union(covered, body_writes[0])
            _require(src, block, buffer, sets.get((id(buffer), "read")), covered, reads,
                     "reads", order)


def _box(standin: Buffer, region: Region, bindings) -> Stmt:
    """A store to every element of ``region`` (in ``standin``), under the block's lets."""
    variables = [Var(f"x{k}", start.dtype) for k, start in enumerate(region.starts)]
    value = BoolImm(False) if standin.dtype == "bool" else ops.const(0, standin.dtype)
    stmt: Stmt = BufferStore(standin, value, tuple(variables))
    for var, start, extent in reversed(list(zip(variables, region.starts, region.extents,
                                                strict=True))):
        stmt = For(var, start, ops.cast(start.dtype, extent), ForKind.SERIAL, stmt)
    for var, value in reversed(bindings):
        stmt = LetStmt(var, value, stmt)
    return stmt


def _touched(model) -> dict:
    """``(id(buffer), kind) -> (set of must-touched elements, set of may-touched ones)``."""
    out: dict = {}
    for s in model.statements:
        if s.is_assume:
            continue
        for access in s.accesses:
            key = (id(access.buffer), access.kind)
            part = access.relation.range().reset_tuple_id()
            must, may = out.get(key, (None, None))
            if not access.may:
                must = _union(must, part)
            out[key] = (must, _union(may, part))
    return out


def _region_set(sets: dict, standins: dict, buffer: Buffer, kind: str):
    standin = standins.get((id(buffer), kind))
    found = sets.get((id(standin), "write")) if standin is not None else None
    return None if found is None else found[1]


def _union(a, b):
    if a is None:
        return b
    return a if b is None else a.union(b)


def _require(src, block: Block, buffer: Buffer, touched, declared, decl: Declared,
             verb: str, order: list[str]) -> None:
    must = touched[0] if touched is not None else None
    if must is None:
        return
    outside = must if declared is None else must.subtract(declared)
    if outside.is_empty():
        return
    names, element = _first(outside, order)
    at = ", ".join(f"{name} = {value}" for name, value in names)
    element = ", ".join(map(str, element))
    mine = [r.text for r in decl.regions if r.buffer is buffer]
    says = ", ".join(mine) if mine else f"nothing of {buffer.name}"
    fn = "T.reads" if verb == "reads" else "T.writes"
    raise src.error(decl.node, f"block {block.name!r} {verb} {buffer.name}[{element}]"
                               f"{f' (at {at})' if at else ''}, which its {fn} does not "
                               f"declare: it declares {says}")


def _first(outside: isl.Set, order: list[str]):
    """The first instance (loop counters outer first) and element of ``outside``.

    Returns ``([(parameter name, value)], element indices)``; the first in
    lexicographic order where that exists, else any.
    """
    params = [outside.get_dim_name(isl.dim_type.param, k)
              for k in range(outside.dim(isl.dim_type.param))]
    params.sort(key=lambda name: (order.index(name) if name in order else len(order), name))
    flat = outside
    for pos, name in enumerate(params):  # the parameters become leading set dimensions
        k = flat.find_dim_by_name(isl.dim_type.param, name)
        flat = flat.move_dims(isl.dim_type.set, pos, isl.dim_type.param, k, 1)
    first = flat.lexmin()
    point = (first if not first.is_empty() else flat).sample_point()
    values = [_coordinate(point, isl.dim_type.set, k) for k in range(flat.dim(isl.dim_type.set))]
    return list(zip(params, values, strict=False)), values[len(params):]


def _coordinate(point: isl.Point, kind, k: int) -> int:
    return point.get_coordinate_val(kind, k).to_python()
