"""Names for loops that users and schedule primitives pass around.

A loop is named by its variable's name where that is unique in the function
(``"i"``).  Where several loops share a variable name -- ``distribute``
copies ``i`` into two blocks, two nests each use ``i`` -- each of them gets a
qualified name ``"<block>/<var>"``: the innermost block around the loop, or
else the first block inside it.  When even that does not tell them apart (two
plain nests without blocks), the name is ``"<var>#<k>"``, the ``k``-th loop
over that variable in program order (from 0).  ``var#k`` is accepted for
every loop, qualified or not, so a caller can always be explicit.

Names are recomputed from the function each time: a primitive that rewrites
loops returns the new names (:func:`loop_name` of the new nodes), and a name
taken from an older version of the function may point elsewhere.
"""

from __future__ import annotations

from polypad.errors import NotFoundError

from . import nodes as n


def loop_names(root) -> dict[str, n.For]:
    """Every loop under ``root`` (a function or statement) by its name, in program order."""
    loops = _loops_with_blocks(_body(root))
    by_var: dict[str, list[int]] = {}
    for k, (loop, _, _) in enumerate(loops):
        by_var.setdefault(loop.var.name, []).append(k)
    names: list[str] = [""] * len(loops)
    for var, ks in by_var.items():
        if len(ks) == 1:
            names[ks[0]] = var
            continue
        qualified = {k: _qualified(loops[k]) for k in ks}
        counts: dict[str | None, int] = {}
        for q in qualified.values():
            counts[q] = counts.get(q, 0) + 1
        for ordinal, k in enumerate(ks):
            q = qualified[k]
            names[k] = q if q is not None and counts[q] == 1 else f"{var}#{ordinal}"
    return {name: loop for name, (loop, _, _) in zip(names, loops, strict=True)}


def loop_name(root, loop: n.For) -> str:
    """The name :func:`loop_names` gives ``loop`` (a node under ``root``)."""
    for name, node in loop_names(root).items():
        if node is loop:
            return name
    raise NotFoundError(f"the loop over {loop.var.name} is not in {_title(root)}")


def find_named_loop(root, ref: n.For | str) -> n.For:
    """The loop ``ref`` names under ``root``: a ``For`` node, a name of
    :func:`loop_names`, or ``var#k``.

    An unknown or ambiguous name raises :class:`~polypad.errors.NotFoundError`
    listing the names that exist (for an ambiguous one, the candidates).
    """
    names = loop_names(root)
    if isinstance(ref, n.For):
        if any(loop is ref for loop in names.values()):
            return ref
        raise NotFoundError(f"the loop over {ref.var.name} is not in {_title(root)}")
    if ref in names:
        return names[ref]
    ordinal = _ordinal(ref, names)
    if ordinal is not None:
        return ordinal
    same_var = [name for name, loop in names.items() if loop.var.name == ref]
    if same_var:
        raise NotFoundError(
            f"{len(same_var)} loops run over a variable called {ref!r} in {_title(root)}; "
            f"name one of them: {', '.join(repr(s) for s in same_var)}")
    listed = ", ".join(repr(s) for s in names) or "none"
    raise NotFoundError(f"no loop {ref!r} in {_title(root)}; loops: {listed}")


def _ordinal(ref: str, names: dict[str, n.For]) -> n.For | None:
    var, sep, k = ref.rpartition("#")
    if not sep or not k.isdigit():
        return None
    same = [loop for loop in names.values() if loop.var.name == var]
    return same[int(k)] if int(k) < len(same) else None


def _qualified(entry: tuple[n.For, str | None, str | None]) -> str | None:
    loop, around, inside = entry
    block = around if around is not None else inside
    return None if block is None else f"{block}/{loop.var.name}"


def _loops_with_blocks(body: n.Stmt) -> list[tuple[n.For, str | None, str | None]]:
    """Each loop in program order, with the innermost block around it and the first
    block inside it (names, or None).  Iterative: IR trees can be deep."""
    out: list[list] = []
    open_loops: list[int] = []  # indices into out of loops whose first inner block is unset
    stack: list[tuple[object, str | None, int]] = [(body, None, 0)]
    while stack:
        node, block, depth = stack.pop()
        del open_loops[depth:]
        if isinstance(node, n.Block):
            for k in open_loops:
                if out[k][2] is None:
                    out[k][2] = node.name
            block = node.name
        if isinstance(node, n.For):
            out.append([node, block, None])
            open_loops.append(len(out) - 1)
            depth = len(open_loops)
        stack += [(child, block, depth) for child in reversed(_stmt_children(node))]
    return [tuple(entry) for entry in out]


def _stmt_children(node) -> list[n.Stmt]:
    match node:
        case n.SeqStmt():
            return list(node.stmts)
        case n.IfThenElse():
            return [s for s in (node.then_case, node.else_case) if s is not None]
        case n.For() | n.LetStmt() | n.Allocate() | n.Block():
            return [node.body]
    return []


def _body(root):
    return root.body if isinstance(root, n.PrimFunc) else root


def _title(root) -> str:
    """``root`` in a message: "function f", "this For"."""
    if isinstance(root, n.PrimFunc):
        return f"function {root.name}"
    return f"this {type(root).__name__}"
