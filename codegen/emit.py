"""A lowered function as the text of a Python module that Numba compiles.

The module defines ``kernel(<params>)`` and, for each vectorized loop, a
helper it calls::

    @numba.njit(cache=True, fastmath=True, boundscheck=False, error_model="numpy")
    def _pp_vector_0(A, B, i):
        for j in range(4):
            B[i, j] = A[i, j] * np.float32(2.0)

    @numba.njit(cache=True, parallel=True, error_model="numpy")
    def kernel(A, B):
        for i in numba.prange(8):
            _pp_vector_0(A, B, i)

Loop kinds:

- ``PARALLEL`` is ``numba.prange``, and the function holding it gets
  ``parallel=True`` (only then: the parallel pipeline costs compile time).
- ``VECTORIZED`` moves the loop into a helper compiled with ``fastmath=True``
  and ``boundscheck=False``.  Fast-math flags sit on each LLVM instruction,
  so they stay on the helper's arithmetic after LLVM inlines it into the
  kernel and never reach the kernel's own, non-vectorized arithmetic -- which
  compiling the whole kernel with ``fastmath`` would do.  (``inline="always"``
  would lose them: it inlines Numba IR, which is then compiled with the
  caller's flags.)  A loop computes nothing a later statement reads through a
  variable (IR variables are immutable), so passing the loop's free
  variables and buffers by argument is exact.
- ``UNROLL`` with constant bounds is written out once per iteration with the
  counter replaced by its value (up to :data:`MAX_UNROLL` iterations; longer
  or symbolic ones stay loops).

Python compiles at most 20 nested loops into one function and reads at most
100 levels of indentation, so a deeper nest continues in a helper
``_pp_nest_<k>`` taking the buffers and variables it uses, as a vectorized
loop does: a loop :data:`MAX_NESTED_LOOPS` deep, or any compound statement
:data:`MAX_INDENT` levels in.  Inside a parallel loop such a helper runs its
own parallel loops serially (Numba cannot launch a parallel region from
within one).  A long expression is cut into temporaries
(:mod:`.pyexpr`).

``T.alloc_buffer`` is ``np.zeros``: the reference executor zero-fills too,
so both targets agree even on a program that reads before writing.

A ``T.assume`` still in the lowered function (``check_assumptions=True``) is
emitted as a check that raises (:mod:`.checks`); a parallel loop holding one
runs serially.  So is a loop whose range polypad cannot prove fits its
counter's dtype, at its entry (:mod:`.loop_ranges`).  ``boundscheck=True``
compiles every function with Numba's bounds checks, and runs parallel loops
serially too, since Numba reports an exception raised in a parallel region
as a ``SystemError``.
"""

from __future__ import annotations

import ast

from polypad.errors import BuildError
from polypad.ir import nodes as ir
from polypad.ir.deep import deep_entry, guarded
from polypad.ir.nodes import Buffer, ForKind, PrimFunc, Var
from polypad.ir.operators import add, as_expr
from polypad.ir.visitor import walk

from .checks import check_lines, checked_assumptions, has_check, is_check
from .loop_ranges import check_lines as range_check_lines
from .loop_ranges import checked_loops, holds_check
from .names import RESERVED, Names
from .pyexpr import ADD, SPLIT, ExprPrinter, numpy_type

#: Longest constant-bound loop that ``T.unroll`` writes out.
MAX_UNROLL = 64
#: Loops nested in one emitted function before the rest goes to a helper.
MAX_NESTED_LOOPS = 16
#: Indentation at which a compound statement goes to a helper.
MAX_INDENT = 48
KERNEL_NAME = "kernel"
_FLAGS = 'cache=True{extra}, error_model="numpy"'


def _has_code(lines: list[str]) -> bool:
    """Whether ``lines`` hold a statement (a suite of comments is a syntax error)."""
    return any(not line.lstrip().startswith("#") for line in lines)


class _Function:
    """One emitted function: its name, parameters, body lines and needs."""

    def __init__(self, name: str, params: list[str], vectorized: bool,
                 boundscheck: bool = False, serial: bool = False):
        self.name, self.params, self.vectorized = name, params, vectorized
        self.boundscheck = boundscheck
        self.lines: list[str] = []
        self.parallel = False
        self.serial = serial  # called from a parallel loop: no prange of its own
        self.loops = 0  # for-loops open at the line being written

    def text(self) -> str:
        extra = ""
        if self.parallel:
            extra += ", parallel=True"
        if self.vectorized:
            extra += ", fastmath=True"
        if self.vectorized or self.boundscheck:
            extra += f", boundscheck={self.boundscheck}"
        body = self.lines if _has_code(self.lines) else [*self.lines, "    pass"]
        return "\n".join([f"@numba.njit({_FLAGS.format(extra=extra)})",
                          f"def {self.name}({', '.join(self.params)}):", *body])


class _Emitter:
    def __init__(self, func: PrimFunc, boundscheck: bool):
        self.func = func
        self.boundscheck = boundscheck
        self.checks = {id(s): k for k, s in enumerate(checked_assumptions(func))}
        self.range_checks = checked_loops(func)
        self.names = Names()
        self.expr = ExprPrinter(self.names)
        self.expr.out, self.expr.part = self.line, self.part
        self.helpers: list[str] = []
        self.helper_names: dict[str, str] = {}
        self.current: _Function | None = None
        self.in_prange = 0  # parallel loops whose body is being written

    def module(self) -> str:
        params = [self.names(p) for p in self.func.params]
        kernel = self.current = _Function(KERNEL_NAME, params, vectorized=False,
                                          boundscheck=self.boundscheck)
        self.stmt(self.func.body, 1)
        header = '"""Generated by polypad; do not edit."""\n\nimport numba\nimport numpy as np'
        parts = [header, *self.helpers, kernel.text()]
        return "\n\n\n".join(parts) + "\n"

    def line(self, depth: int, text: str) -> None:
        self.current.lines.append("    " * depth + text)

    def block(self, stmt: ir.Stmt, depth: int) -> None:
        """A nested suite: ``stmt`` at ``depth``, or ``pass`` if it emits nothing."""
        before = len(self.current.lines)
        self.stmt(stmt, depth)
        if not _has_code(self.current.lines[before:]):
            self.line(depth, "pass")

    # -- statements ---------------------------------------------------------

    @guarded
    def stmt(self, stmt: ir.Stmt, depth: int) -> None:
        if isinstance(stmt, (ir.For, ir.IfThenElse)) and depth >= MAX_INDENT:
            self.helper(stmt, depth, "nest")
            return
        with self.expr.at(depth):  # where a long expression's temporaries go
            self._stmt(stmt, depth)

    def _stmt(self, stmt: ir.Stmt, depth: int) -> None:
        match stmt:
            case ir.SeqStmt():
                for s in stmt.stmts:
                    self.stmt(s, depth)
            case ir.For():
                self.loop(stmt, depth)
            case ir.IfThenElse():
                self.if_(stmt, depth, "if")
            case ir.BufferStore():
                self.line(depth, f"{self.expr.load(stmt.buffer, stmt.indices)} = "
                                 f"{self.expr(stmt.value)}")
            case ir.LetStmt():
                self.expr.bound(stmt.var, stmt.value, stmt.value)
                self.line(depth, f"{self.names(stmt.var)} = {self.expr(stmt.value)}")
                self.stmt(stmt.body, depth)
            case ir.Evaluate() if is_check(stmt):
                for text in check_lines(stmt, self.checks[id(stmt)], self.expr):
                    self.line(depth, text)
            case ir.Evaluate():
                pass  # expressions have no effects
            case ir.Block():
                self.line(depth, "# block " + " ".join(stmt.name.split()))
                self.stmt(stmt.body, depth)
            case ir.Allocate():
                buf = stmt.buffer
                shape = ", ".join(self.expr(as_expr(e)) for e in buf.shape)
                shape += "," if len(buf.shape) == 1 else ""
                self.line(depth, f"{self.names(buf)} = np.zeros(({shape}), "
                                 f"dtype={numpy_type(buf.dtype)})")
                self.stmt(stmt.body, depth)
            case _:
                raise BuildError(f"the numba target cannot emit {type(stmt).__name__}")

    def if_(self, stmt: ir.IfThenElse, depth: int, keyword: str) -> None:
        self.line(depth, f"{keyword} {self.expr(stmt.condition)}:")
        self.block(stmt.then_case, depth + 1)
        other = stmt.else_case
        if isinstance(other, ir.IfThenElse) and self.expr.height(other.condition) >= SPLIT:
            self.line(depth, "else:")  # its temporaries may not go before an elif
            self.stmt(other, depth + 1)
        elif isinstance(other, ir.IfThenElse):
            self.if_(other, depth, "elif")
        elif other is not None:
            self.line(depth, "else:")
            self.block(other, depth + 1)

    def loop(self, loop: ir.For, depth: int) -> None:
        if loop.kind is ForKind.VECTORIZED and not self.current.vectorized:
            self.helper(loop, depth, "vector")
            return
        self.expr.bound(loop.var, loop.min, add(loop.min, loop.extent) - 1)
        unroll = loop.kind is ForKind.UNROLL and self.unrollable(loop)
        if not unroll and self.current.loops >= MAX_NESTED_LOOPS:
            self.helper(loop, depth, "nest")
            return
        if id(loop) in self.range_checks:
            number, _, low, high = self.range_checks[id(loop)]
            for text in range_check_lines(loop, number, low, high, self.expr):
                self.line(depth, text)
        if unroll:
            start = loop.min.value
            for value in range(start, start + loop.extent.value):
                self.expr.subst[loop.var] = str(value)
                self.stmt(loop.body, depth)
            self.expr.subst.pop(loop.var, None)
            return
        var = self.names(loop.var)
        extent = self.expr(loop.extent)
        zero_based = isinstance(loop.min, ir.IntImm) and loop.min.value == 0
        prange = (loop.kind is ForKind.PARALLEL and not self.current.serial
                  and not (self.boundscheck or has_check(loop)
                           or holds_check(loop, self.range_checks)))
        if prange:
            self.current.parallel = True
            if zero_based:
                self.line(depth, f"for {var} in numba.prange({extent}):")
            else:
                offset = self.names.fresh(var + "_offset")
                self.line(depth, f"for {offset} in numba.prange({extent}):")
                self.line(depth + 1, f"{var} = {self.expr.operand(loop.min, ADD)} + {offset}")
        elif zero_based:
            self.line(depth, f"for {var} in range({extent}):")
        else:
            # Not wrapped to the counter's dtype: the end may be one past its range.
            end = f"{self.expr.operand(loop.min, ADD)} + {self.expr.operand(loop.extent, ADD + 1)}"
            if isinstance(loop.min, ir.IntImm) and isinstance(loop.extent, ir.IntImm):
                end = str(loop.min.value + loop.extent.value)
            self.line(depth, f"for {var} in range({self.expr(loop.min)}, {end}):")
        self.current.loops += 1
        self.in_prange += prange
        self.block(loop.body, depth + 1)
        self.in_prange -= prange
        self.current.loops -= 1

    def unrollable(self, loop: ir.For) -> bool:
        return (isinstance(loop.min, ir.IntImm) and isinstance(loop.extent, ir.IntImm)
                and loop.extent.value <= MAX_UNROLL)

    def part(self, text: str) -> str:
        """A call of a helper ``_pp_part_<k>`` returning ``text``, one piece of a long
        expression: Numba's and LLVM's time grows faster than a function's length."""
        args, params, body = _parameterized(text)
        piece = _Function("{name}", params, vectorized=self.current.vectorized,
                          boundscheck=self.boundscheck)
        piece.lines.append(f"    return {body}")
        return f"{self.register(piece, 'part')}({', '.join(args)})"

    def register(self, function: _Function, kind: str) -> str:
        """The name of helper ``function`` (named ``{name}``): a new one, or its twin's."""
        template = function.text()
        name = self.helper_names.get(template)
        if name is None:  # identical helpers (say, unrolled copies) are one
            name = self.helper_names[template] = f"_pp_{kind}_{len(self.helpers)}"
            self.helpers.append(template.replace("def {name}(", f"def {name}(", 1))
        return name

    def helper(self, stmt: ir.Stmt, depth: int, kind: str) -> None:
        """Emit ``stmt`` as a helper function ``_pp_<kind>_<k>`` and call it here.

        A ``"vector"`` helper is compiled with fast-math; a ``"nest"`` helper
        holds what is nested too deeply for one function.
        """
        buffers, variables = _free(stmt)
        outer, saved = self.current, dict(self.expr.subst)
        args = [self.names(b) for b in buffers] + [self.expr(v) for v in variables]
        params = [self.names(b) for b in buffers] + [self.names(v) for v in variables]
        self.expr.subst.clear()
        helper = self.current = _Function("{name}", params, vectorized=kind == "vector",
                                          boundscheck=self.boundscheck,
                                          serial=outer.serial or self.in_prange > 0)
        self.stmt(stmt, 1)
        self.current = outer
        self.expr.subst.update(saved)
        self.line(depth, f"{self.register(helper, kind)}({', '.join(args)})")


def _parameterized(text: str) -> tuple[list[str], list[str], str]:
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


def _free(stmt: ir.Stmt) -> tuple[list[Buffer], list[Var]]:
    """Buffers and variables ``stmt`` uses but does not define, in first-use order."""
    bound: set[Var] = set()
    allocated: set[Buffer] = set()
    buffers: dict[Buffer, None] = {}
    variables: dict[Var, None] = {}
    for node in walk(stmt):
        match node:
            case ir.For() | ir.LetStmt() | ir.Let():
                bound.add(node.var)
            case ir.Allocate():
                allocated.add(node.buffer)
                for extent in node.buffer.shape:
                    if isinstance(extent, Var):
                        variables.setdefault(extent)
            case ir.BufferLoad() | ir.BufferStore():
                buffers.setdefault(node.buffer)
            case Var():
                variables.setdefault(node)
    return ([b for b in buffers if b not in allocated],
            [v for v in variables if v not in bound])


def _check_supported(func: PrimFunc) -> None:
    buffers = [p for p in func.params if isinstance(p, Buffer)]
    buffers += [n.buffer for n in walk(func.body) if isinstance(n, ir.Allocate)]
    for buffer in buffers:
        if buffer.dtype == "float16":
            raise BuildError(f"the numba target does not support float16 (buffer "
                             f"{buffer.name!r}); use target='python' or float32")


@deep_entry
def emit(func: PrimFunc, *, boundscheck: bool = False) -> str:
    """The Python module text for lowered ``func``; its kernel is ``kernel``.

    ``boundscheck=True`` turns on Numba's bounds checks in every function.
    """
    _check_supported(func)
    return _Emitter(func, boundscheck).module()
