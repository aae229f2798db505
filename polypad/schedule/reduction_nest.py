"""The loop nest around a reduction, as ``rfactor`` and ``decompose_reduction`` see it.

A reduction's *nest* is the run of loops, ``if``\\ s (without ``else``),
blocks and lets just around its update that hold nothing else -- TVM's block
inside its loops reads as::

    for i, k in T.grid(8, 16):            # For i, For k
        with T.block("sum"):              # Block
            vi, vk = T.axis.remap("SR", [i, k])     # LetStmt vi, LetStmt vk
            with T.init():                # IfThenElse(vk == 0, init)  \\ a SeqStmt,
                B[vi] = T.float32(0)      #                             | the T.init
            B[vi] = B[vi] + A[vi, vk]     # the update                  / form

Copies of a nest (:func:`copy_nest`) run an init or a write-back over some
of its loops: lets are inlined there, and the conjuncts of guards that
mention a dropped loop are left out.  A guard that holds exactly when some
loops are at their first iteration (``vk == 0`` with ``vk = k``; ``ko * 16 +
ki == 0``) *pins* them (:func:`pinned`): a copy runs that iteration alone,
without the loops and the guard.  Pinning is decided by isl, not read off the
guard's shape.
"""

from __future__ import annotations

import islpy as isl

from polypad.errors import NotAffineError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.locate import ancestors, replace
from polypad.ir.naming import fresh_name
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.views import root
from polypad.ir.visitor import walk

LAYERS = (n.For, n.Block, n.LetStmt)


def reads(expr, buffer: n.Buffer) -> bool:
    """Whether ``expr`` loads ``buffer``'s memory (through a view too)."""
    base = root(buffer)
    return any(isinstance(x, n.BufferLoad) and root(x.buffer) is base for x in walk(expr))


def find_init(func: n.PrimFunc, block: n.Block | None, loop: n.For) -> n.BufferStore | None:
    """The init of a reduction under ``loop`` (inside ``block``; anywhere for ``None``):
    the first store that writes a buffer without reading it and that a reduction
    update under ``loop`` updates (an argmax's index buffer counts as updated)."""
    inside_block = {id(x) for x in walk(func.body if block is None else block)}
    stores = [x for x in walk(loop) if isinstance(x, n.BufferStore) and id(x) in inside_block]
    updated = set(_partners(stores))
    return next((s for s in stores if id(s.buffer) in updated
                 and not reads(s.value, s.buffer)), None)


def _partners(stores) -> dict[int, set[int]]:
    """The buffers a reduction among ``stores`` updates, by ``id``, each with the ids
    of the buffers updated with it: an argmax's index and value buffers are partners."""
    # analyses imports polypad, whose import runs this module: imported on use.
    from analyses.combiners import arg_update_of, update_of

    out: dict[int, set[int]] = {id(u.buffer): set() for u in map(update_of, stores)
                                if u is not None}
    for first, second in zip(stores, stores[1:], strict=False):
        arg = arg_update_of(first, second)
        if arg is not None:
            pair = {id(arg.index_buffer), id(arg.update.buffer)}
            for b in pair:
                out.setdefault(b, set()).update(pair - {b})
    return out


def init_group(func: n.PrimFunc, init: n.BufferStore, loop: n.For) -> list[n.BufferStore]:
    """The stores that start a reduction together with ``init`` (found by
    :func:`find_init` under ``loop``), in their order.

    In TVM's ``T.init()`` form -- an ``if`` without ``else`` holding stores
    alone -- all of them: the block's init is its whole ``T.init()`` (an
    argmax's value and index).  Otherwise ``init`` and, beside it in its
    sequence, the init of the buffer reduced with it (an argmax's other
    buffer, at the same element), if any.
    """
    path = ancestors(func, init)
    parent = path[-2] if len(path) > 1 else None
    if not isinstance(parent, n.SeqStmt):
        return [init]
    guard = path[-3] if len(path) > 2 else None
    if (isinstance(guard, n.IfThenElse) and guard.else_case is None
            and guard.then_case is parent
            and all(isinstance(x, n.BufferStore) for x in parent.stmts)):
        return list(parent.stmts)
    stores = [x for x in walk(loop) if isinstance(x, n.BufferStore)]
    partners = _partners(stores).get(id(init.buffer), set())
    k = next(k for k, x in enumerate(parent.stmts) if x is init)
    beside = [parent.stmts[j] for j in (k - 1, k + 1) if 0 <= j < len(parent.stmts)]
    other = [x for x in beside if isinstance(x, n.BufferStore) and id(x.buffer) in partners
             and x.indices == init.indices and not reads(x.value, x.buffer)]
    return sorted([init, *other[:1]],
                  key=lambda x: next(j for j, y in enumerate(parent.stmts) if y is x))


def is_layer(x: n.Stmt) -> bool:
    """A statement a nest may pass through: a loop, block, let or ``if`` without ``else``."""
    return isinstance(x, LAYERS) or isinstance(x, n.IfThenElse) and x.else_case is None


def single_statement_nest(func: n.PrimFunc, stmt: n.Stmt) -> list[n.Stmt]:
    """The loops, ifs (without else), blocks and lets just around ``stmt`` that hold
    nothing else, outermost first, from the outermost loop; they stop at an
    allocation or a sequence."""
    path = ancestors(func, stmt)[:-1]
    nest: list[n.Stmt] = []
    for x in reversed(path):
        if not is_layer(x):
            break
        nest.insert(0, x)
    return nest[next((k for k, x in enumerate(nest) if isinstance(x, n.For)), len(nest)):]


def let_values(nest) -> dict[n.Var, n.Expr]:
    """The lets of ``nest`` (outermost first) as ``{var: value}``, each value with the
    lets above it inlined."""
    out: dict = {}
    for x in nest:
        if isinstance(x, n.LetStmt):
            out[x.var] = substitute(x.value, out)
    return out


def conjuncts(condition: n.Expr) -> list[n.Expr]:
    if isinstance(condition, n.And):
        return conjuncts(condition.a) + conjuncts(condition.b)
    return [condition]


def conjunction(parts: list[n.Expr]) -> n.Expr | None:
    out = None
    for c in parts:
        out = c if out is None else n.And(out, c)
    return out


def copy_nest(nest, dropped: set, suffix: str, taken: set, leaf, fixed=None, skip=()):
    """Copies of the loops of ``nest`` over no ``dropped`` variable, with new variables
    ``<var><suffix>``, and the conjuncts of guards that mention no dropped variable,
    around ``leaf(mapping)``; returns the copy and its loops.

    Blocks are not copied (a block name must stay unique); lets are inlined into
    what follows them (a let over a dropped variable counts as dropped).
    ``fixed`` maps variables whose loops are left out to their values; the
    statements of ``skip`` (guards a pin replaced) are left out.
    """
    mapping: dict = dict(fixed or {})
    dropped = set(dropped)
    layers: list = []
    for x in nest:
        if any(x is s for s in skip):
            continue
        if isinstance(x, n.For):
            if x.var in dropped or x.var in mapping:
                continue
            var = n.Var(fresh_name(taken, x.var.name + suffix), x.var.dtype)
            layers.append(("for", x, var))
            mapping[x.var] = var
        elif isinstance(x, n.LetStmt):
            if dropped & set(free_vars(x.value)):
                dropped.add(x.var)
            else:
                mapping[x.var] = substitute(x.value, mapping)
        elif isinstance(x, n.IfThenElse):
            # The conjuncts over kept variables still hold; the others are left out.
            kept = [c for c in conjuncts(x.condition) if not dropped & set(free_vars(c))]
            if kept:
                layers.append(("if", substitute(conjunction(kept), mapping), None))
    body: n.Stmt = leaf(mapping)
    loops = []
    for kind, x, var in reversed(layers):
        if kind == "for":
            body = n.For(var, substitute(x.min, mapping), substitute(x.extent, mapping),
                         n.ForKind.SERIAL, body)
            loops.insert(0, body)
        else:
            body = n.IfThenElse(x, body)
    return body, loops


def pinned(chain, params=()) -> dict:
    """The loops of ``chain`` that a guard below them pins to their first iteration,
    as ``{var: (value, guard)}``.

    A guard (an ``if`` without ``else``; lets of the chain inlined) pins the
    loops of the chain it mentions when, over their ranges, it holds at their
    first values and nowhere else -- the ``T.init`` form, ``vk == 0`` or
    ``ko * 16 + ki == 0``.  isl decides it, for every value of the function's
    scalar ``params``: each range must then start with a value (a loop of symbolic
    extent that may be empty pins nothing, as its guard might never run).
    """
    from polypad.model.conditions import to_set

    out: dict = {}
    loops = {x.var: x for x in chain if isinstance(x, n.For)}
    lets: dict = {}
    for x in chain:
        if isinstance(x, n.LetStmt):
            lets[x.var] = substitute(x.value, lets)
        if not (isinstance(x, n.IfThenElse) and x.else_case is None):
            continue
        cond = substitute(x.condition, lets)
        used = [v for v in free_vars(cond) if v in loops and v not in out]
        others = [v for v in free_vars(cond) if v not in loops and v not in params]
        if not used or others:
            continue
        ranges = [(loops[v].min, loops[v].extent) for v in used]
        if any(set(free_vars(e)) - set(params) for r in ranges for e in r):
            continue  # a range over another loop: not a box
        try:
            box = to_set(conjunction([c for v, (lo, ext) in zip(used, ranges, strict=True)
                                      for c in (n.Ge(v, lo), n.Lt(v, n.Add(lo, ext)))]), used)
            holds = to_set(cond, used).intersect(box)
            first = to_set(conjunction([n.Eq(v, lo) for v, (lo, _) in
                                        zip(used, ranges, strict=True)]), used).intersect(box)
        except NotAffineError:
            continue
        always = isl.Set.universe(box.params().get_space())
        if holds.is_equal(first) and first.params().is_equal(always):
            for v, (lo, _) in zip(used, ranges, strict=True):
                out[v] = (lo, x)
    return out


def offset(var: n.Expr, start: n.Expr) -> n.Expr:
    return var if isinstance(start, n.IntImm) and start.value == 0 else n.Sub(var, start)


def buffer_names(func: n.PrimFunc) -> set:
    names = {p.name for p in func.params if isinstance(p, n.Buffer)}
    return names | {x.buffer.name for x in walk(func.body) if isinstance(x, n.Allocate)}


def loop_var_names(func: n.PrimFunc) -> set:
    return {x.var.name for x in walk(func.body) if isinstance(x, n.For)}


def remove(func: n.PrimFunc, path, stmt: n.Stmt, where: str) -> n.PrimFunc:
    """``func`` without ``stmt``, taken from the nearest sequence holding it below
    ``path[0]``."""
    for k in range(len(path) - 2, 0, -1):
        parent = path[k]
        if isinstance(parent, n.SeqStmt):
            rest = tuple(s for s in parent.stmts if s is not path[k + 1])
            return replace(func, parent, rest[0] if len(rest) == 1 else n.SeqStmt(rest))
    raise PolypadError(f"{where}: the init is all that its loops hold")


def insert_before(func: n.PrimFunc, stmt: n.Stmt, new: n.Stmt) -> n.PrimFunc:
    """``func`` with ``new`` just before ``stmt``, in the sequence holding it if any
    (the parser reads ``a; b; c`` as one flat sequence: a sequence ``new`` is
    spliced in)."""
    path = ancestors(func, stmt)
    parent = path[-2] if len(path) > 1 else None
    added = new.stmts if isinstance(new, n.SeqStmt) else (new,)
    if isinstance(parent, n.SeqStmt):
        k = next(k for k, x in enumerate(parent.stmts) if x is stmt)
        return replace(func, parent, n.SeqStmt(parent.stmts[:k] + added + parent.stmts[k:]))
    return replace(func, stmt, n.SeqStmt((*added, stmt)))


def unshared(func: n.PrimFunc, loop: n.For) -> tuple[n.PrimFunc, n.For]:
    """``func`` with the statements under ``loop`` made new objects, and the loop.

    The rewrites here find statements by identity and replace them, which must reach
    one place only.  ``split(tail="partition")`` no longer shares statements between
    its nests and ``verify`` refuses a tree that does, but a schedule does not verify
    the function it is given (unless ``POLYPAD_VERIFY_PASSES`` is set), so a tree
    built by hand may still share: the copy is kept as the safe answer there.
    Variables stay: the copy binds the same ones."""
    copy = fresh_copy(loop)
    return replace(func, loop, copy), copy


def loop_by_var(func: n.PrimFunc, var: n.Var, holding: n.Stmt | None = None) -> n.For:
    """The loop of ``func`` over the variable ``var`` (an identity): a rewrite that
    rebuilds the statements around a loop keeps its variable.  Where a partition's
    tail shares the loop, ``holding`` (a statement object of one copy) says which."""
    found = [x for x in walk(func.body) if isinstance(x, n.For) and x.var is var]
    if holding is not None and len(found) > 1:
        found = [x for x in found if any(y is holding for y in walk(x))]
    if len(found) != 1:  # pragma: no cover - rewrites keep a loop's variable unique
        raise PolypadError(f"the loop over {var.name} is not in {func.name} once")
    return found[0]
