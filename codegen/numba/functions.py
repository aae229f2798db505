"""The functions of an emitted module: what each is compiled with, and what a
helper takes.

Every function of a kernel's module is a :class:`Function`: its name, its
parameters, its body lines and the flags its ``@numba.njit`` gets
(``parallel=True`` only where it holds a ``prange``; the fast-math flags of
:mod:`.fastmath`, which differ for a vectorized loop's helper under
``fastmath="full"``; ``boundscheck``).  A helper -- a vectorized loop under
full fast-math, a nest too deep for one function, a piece of a long
expression -- reads what it needs from outside through parameters:
:func:`free_inputs` names the buffers and variables a statement uses but does
not define, :func:`parameterized` the names an expression's text reads, so
that two pieces of the same shape become one helper.
"""

from __future__ import annotations

import ast

from polypad.ir import nodes as ir
from polypad.ir.nodes import Buffer, Var
from polypad.ir.visitor import walk

from .fastmath import flag
from .names import RESERVED

_FLAGS = 'cache=True{extra}, error_model="numpy"'


def has_code(lines: list[str]) -> bool:
    """Whether ``lines`` hold a statement (a suite of comments is a syntax error)."""
    return any(not line.lstrip().startswith("#") for line in lines)


class Function:
    """One emitted function: its name, parameters, body lines and needs."""

    def __init__(self, name: str, params: list[str], vectorized: bool,
                 boundscheck: bool = False, serial: bool = False,
                 fastmath: str | None = None):
        self.name, self.params, self.vectorized = name, params, vectorized
        self.boundscheck = boundscheck
        self.fastmath = flag(fastmath, vectorized)  # numba.njit's fastmath argument
        self.lines: list[str] = []
        self.parallel = False
        self.serial = serial  # called from a parallel loop: no prange of its own
        self.loops = 0  # for-loops open at the line being written

    def text(self) -> str:
        extra = ""
        if self.parallel:
            extra += ", parallel=True"
        if self.fastmath is not None:
            extra += f", fastmath={self.fastmath}"
        if self.vectorized or self.boundscheck:
            extra += f", boundscheck={self.boundscheck}"
        body = self.lines if has_code(self.lines) else [*self.lines, "    pass"]
        return "\n".join([f"@numba.njit({_FLAGS.format(extra=extra)})",
                          f"def {self.name}({', '.join(self.params)}):", *body])



def parameterized(text: str) -> tuple[list[str], list[str], str]:
    """The names ``text`` (a Python expression) reads from outside, in order of first
    use, their new names ``_a0``, ``_a1``..., and ``text`` with them renamed: the
    parameters and body of a helper, the same for every piece of the same shape.

    Module-level names (``np``, ``min``, helpers) and a lambda's parameters are not
    read from outside.
    """
    tree = ast.parse(text, mode="eval")
    free: dict[str, list[ast.Name]] = {}
    taken: set[str] = set()
    stack: list[tuple[ast.AST, frozenset]] = [(tree, frozenset())]
    while stack:
        node, bound = stack.pop()
        if isinstance(node, ast.Lambda):
            bound = bound | {a.arg for a in node.args.args}
            taken |= {a.arg for a in node.args.args}
        elif isinstance(node, ast.Name):
            taken.add(node.id)
            if (node.id not in bound and node.id not in RESERVED
                    and not node.id.startswith("_pp_")):
                free.setdefault(node.id, []).append(node)
        stack += [(child, bound) for child in reversed(list(ast.iter_child_nodes(node)))]
    fresh = (f"_a{k}" for k in range(len(taken) + len(free) + 1))
    params = []
    for uses in free.values():
        params.append(next(name for name in fresh if name not in taken))
        for use in uses:
            use.id = params[-1]
    return list(free), params, ast.unparse(tree)


def free_inputs(stmt: ir.Stmt) -> tuple[list[Buffer], list[Var]]:
    """Buffers and variables ``stmt`` uses but does not define, in first-use order."""
    bound: set[Var] = set()
    allocated: set[Buffer] = set()
    buffers: dict[Buffer, None] = {}
    variables: dict[Var, None] = {}
    for node in walk(stmt):
        match node:
            case ir.For() | ir.LetStmt() | ir.Let():
                bound.add(node.var)
            case ir.Allocate() | ir.DeclBuffer():
                allocated.add(node.buffer)
                for extent in node.buffer.shape:
                    if isinstance(extent, Var):
                        variables.setdefault(extent)
                if isinstance(node.buffer.data, Buffer):
                    buffers.setdefault(node.buffer.data)
            case ir.BufferLoad() | ir.BufferStore():
                buffers.setdefault(node.buffer)
            case Var():
                variables.setdefault(node)
    return ([b for b in buffers if b not in allocated],
            [v for v in variables if v not in bound])
