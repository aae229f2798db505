"""Finding the blocks, loops, buffers and statements that callers name.

Schedules, analyses and passes all take "the loop over ``i``" or "the block
``compute``" from a user; this module turns such a reference into the node,
and puts a rebuilt node back in place.  Nodes are found by identity, so a
reference obtained from one function is only valid for that function.
"""

from __future__ import annotations

from polypad.errors import NotFoundError

from . import nodes as n
from .loop_names import _body, _title, find_named_loop
from .visitor import Rewriter, children, walk


def find_block(root, name: str) -> n.Block:
    """The ``Block`` called ``name`` under ``root`` (a function or a statement)."""
    blocks = [node for node in walk(_body(root)) if isinstance(node, n.Block)]
    found = [b for b in blocks if b.name == name]
    if len(found) == 1:
        return found[0]
    if not found:
        names = ", ".join(repr(b.name) for b in blocks) or "none"
        raise NotFoundError(f"no block {name!r} in {_title(root)}; blocks: {names}")
    raise NotFoundError(f"{len(found)} blocks are called {name!r} in {_title(root)}")


def find_loop(root, ref: n.For | str) -> n.For:
    """The loop ``ref`` names: a ``For`` node under ``root``, or a loop name of
    :mod:`polypad.ir.loop_names` (its variable's name where unique, else
    ``"block/var"`` or ``"var#k"``)."""
    return find_named_loop(root, ref)


def find_buffer(func: n.PrimFunc, ref: n.Buffer | str) -> n.Buffer:
    """A parameter or allocated buffer of ``func``, by object or by name."""
    buffers = [p for p in func.params if isinstance(p, n.Buffer)]
    buffers += [node.buffer for node in walk(func.body) if isinstance(node, n.Allocate)]
    if isinstance(ref, n.Buffer):
        if any(b is ref for b in buffers):
            return ref
        raise NotFoundError(f"buffer {ref.name} is not declared in {_title(func)}")
    found = [b for b in buffers if b.name == ref]
    if len(found) == 1:
        return found[0]
    if not found:
        names = ", ".join(b.name for b in buffers) or "none"
        raise NotFoundError(f"no buffer {ref!r} in {_title(func)}; buffers: {names}")
    raise NotFoundError(f"{len(found)} buffers are called {ref!r} in {_title(func)}")


def ancestors(root, node) -> tuple:
    """The nodes from ``root``'s body down to ``node`` (both included), by identity."""
    path = _path(_body(root), node)
    if path is None:
        raise NotFoundError(f"the node is not in {_title(root)}")
    return tuple(path)


def enclosing_loops(root, node) -> tuple[n.For, ...]:
    """The loops around ``node``, outermost first."""
    return tuple(a for a in ancestors(root, node)[:-1] if isinstance(a, n.For))


def replace(root, old, new):
    """``root`` with the node ``old`` (by identity) replaced by ``new``."""
    replacer = _Replacer(old, new)
    if isinstance(root, n.PrimFunc):
        body = replacer.visit(root.body)
        out = root if body is root.body else n.PrimFunc(root.name, root.params, body, root.attrs)
    else:
        out = replacer.visit(root)
    if not replacer.done:
        raise NotFoundError(f"the node to replace is not in {_title(root)}")
    return out


class _Replacer(Rewriter):
    def __init__(self, old, new):
        self.old, self.new, self.done = old, new, False
        # No statement sits inside an expression: replacing one need not walk them.
        self.skip_exprs = isinstance(old, n.Stmt)

    def visit(self, node):
        if node is self.old:
            self.done = True
            return self.new
        if self.skip_exprs and isinstance(node, n.Expr):
            return node
        return super().visit(node)


def _path(current, target):
    # Iterative depth-first search keeping the path; IR trees can be deep.
    stack = [(current, [current])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        for child in children(node):
            stack.append((child, path + [child]))
    return None
