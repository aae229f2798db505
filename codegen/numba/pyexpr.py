"""IR expressions as Python source text that Numba compiles with the IR's meaning.

- Float32 constants are written ``np.float32(2.0)``: a bare ``2.0`` is a
  float64 in Numba and would promote the whole expression.  Integer constants
  are bare except for the narrow and unsigned types (a ``uint64`` meeting a
  bare ``int`` becomes ``float64`` in Numba).
- Integer ``//`` and ``%`` are written as Python's operators: Numba gives them
  Python's floor semantics for every integer type (tested with negative
  operands and divisors in ``tests/codegen``); the kernel's
  ``error_model="numpy"`` makes a zero divisor give 0 instead of raising.
- Integers wrap at their width, as numpy's do (and the reference executor):
  Numba computes ``int32 + int32`` in 64 bits, so an operation whose result
  may leave its dtype's range (interval arithmetic over the loop ranges the
  emitter records, :mod:`polypad.model.ranges`) is wrapped in its dtype's
  constructor, ``np.int32(a * b)``.  An ``int64`` ``+``, ``-`` or ``*`` that
  may wrap is computed in ``uint64``, ``np.int64(np.uint64(a) + np.uint64(b))``:
  Numba's signed arithmetic is LLVM's ``nsw``, whose overflow the optimizer
  assumes away.  Index arithmetic inside known loop ranges needs no wrap and
  stays plain.
- ``Select``, ``and`` and ``or`` stay lazy (a conditional expression,
  Python's short-circuit operators), so a guarded load is never executed.
  In a ``numba.prange`` body Numba types the counter ``uint64``, and a
  choice between it and a signed integer (``i if i < n else 3``,
  ``min(i, n)``) would be a ``float64``: there each operand of an integer
  ``Select``, ``min`` or ``max`` reading a parallel counter is cast to its
  dtype.
- An expression ``Let`` becomes an immediately applied lambda,
  ``(lambda x: body)(value)``: Numba inlines it, whereas the walrus operator
  does not type in Numba, and hoisting the value out of a lazy branch could
  load out of bounds.
- Operands are parenthesized by Python precedence, and the right operand of a
  binary operator whenever it is compound: float ``a + (b + c)`` must not
  become ``a + b + c``.
- An expression nested :data:`SPLIT` levels deep or more, printed for a
  statement (:meth:`ExprPrinter.at`), is cut into temporaries on lines
  before it -- ``_t = a + b + ... ``, then ``_t + c + ...`` -- since
  Python's compiler and tokenizer refuse very deep nesting.  Each
  temporary holds the value its sub-expression had, computed by the same
  operations in the same order (so floats round alike) -- in a helper
  function of the emitter's, so that no compiled function grows large
  (LLVM's time grows faster than a function's length); one whose
  evaluation is conditional (a branch of ``Select``, the right operand of
  ``and``/``or``) is computed under an ``if`` of that condition, so no
  guarded load runs unguarded, and a ``Let`` binds a local variable.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from polypad.errors import BuildError
from polypad.ir import dtypes
from polypad.ir import nodes as ir
from polypad.ir.deep import guarded
from polypad.ir.nodes import Var
from polypad.ir.opaque import is_value_bitcast
from polypad.ir.visitor import children
from polypad.ir.visitor import walk as _walk
from polypad.model.ranges import Ranges, wrap

from ..bounds_guards import location
from ..source_text import ATOM, BINARY, COMPARE, COND, MUL, OR, UNARY, CommonExprs, wrapping_int64
from ..source_text import constant as source_constant
from ..source_text import numpy_type as source_numpy_type
from .guards import GuardState, load_text, store_lines
from .names import Names

_BINARY = BINARY
_FOLD = {
    ir.Add: operator.add, ir.Sub: operator.sub, ir.Mul: operator.mul,
    ir.FloorDiv: operator.floordiv, ir.FloorMod: operator.mod,
}
_INT = re.compile(r"-?[0-9]+")
# 64-bit arithmetic wraps natively in Numba; narrower types are computed wider.
_NATIVE = ("int64", "uint64")
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "bitwise_not": "~",
            "shift_left": "<<", "shift_right": ">>"}
_MATH = {"exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "ceil", "abs"}
#: Nesting depth at which a statement's expression is cut into temporaries:
#: far below Python's limits (200 nested parentheses in the tokenizer).
SPLIT = 40


def numpy_type(dtype: str) -> str:
    """``np.float32`` for ``"float32"``: the constructor that casts to ``dtype``."""
    return source_numpy_type(dtype, "numba")


def constant(value, dtype: str) -> tuple[str, int]:
    """Source text and precedence of a constant of ``dtype``."""
    return source_constant(value, dtype, "numba")


def bitwise(op: str, args: list[str], dtype: str) -> str:
    """A bitwise intrinsic on operand texts, with numpy's meaning (docs/semantics.md).

    Numba computes narrow integers in 64 bits, so the result is cast back to
    ``dtype`` (a left shift wraps there).  LLVM leaves a shift by ``bits`` or
    more undefined, so a shift is an applied lambda (each operand evaluated
    once) that gives numpy's answer there: 0, or the sign shifting right.
    """
    cast, symbol = numpy_type(dtype), _BITWISE[op]
    if op == "bitwise_not":
        return f"{cast}(~({args[0]}))"
    if op not in ("shift_left", "shift_right"):
        return f"{cast}(({args[0]}) {symbol} ({args[1]}))"
    zero = constant(0, dtype)[0]
    outside = zero
    if op == "shift_right" and dtype[0] != "u":
        outside = f"({constant(-1, dtype)[0]} if _a < 0 else {zero})"
    return (f"(lambda _a, _b: {cast}(_a {symbol} _b) if 0 <= _b < {dtypes.bits(dtype)} "
            f"else {outside})({args[0]}, {args[1]})")


class ExprPrinter(CommonExprs):
    """Prints expressions; ``subst`` maps unrolled loop variables to literals."""

    def __init__(self, names: Names):
        self.names = names
        self.subst: dict[Var, str] = {}
        #: Ranges of the loop counters and lets in scope, for deciding what may wrap.
        self.ranges = Ranges()
        #: Where temporaries go: ``out(depth, text)`` writes a line (set by the
        #: emitter); ``depth`` is the indentation of the statement being printed,
        #: and ``None`` keeps every expression on one line.
        self.out: Callable[[int, str], None] | None = None
        self.depth: int | None = None
        #: ``part(text)``: a call of a helper function returning ``text`` (set by
        #: the emitter, to keep each compiled function small).
        self.part: Callable[[str], str] | None = None
        #: Buffers held in a local across the loop being printed, with the local's
        #: name: every access to one is to that element (:mod:`.accumulators`).
        self.scalars: dict[ir.Buffer, str] = {}
        #: The counters of the parallel loops being printed, and the lets computed
        #: from them (see :meth:`load`).
        self.parallel_vars: set[Var] = set()
        #: The run-time bounds checks to write (:mod:`.guards`), or None; the accesses
        #: checked before the loop being written (:mod:`.hoist`): ``(buffer, indices)``
        #: to the locals holding the checked axes' indices (None for an axis printed
        #: in place) and whether the check passed (or None).
        self.guard: GuardState | None = None
        self.hoisted: dict[tuple, tuple[list[str | None], str | None]] = {}
        self._heights: dict[int, tuple[ir.Expr, int]] = {}
        self._pending: dict[int, tuple[ir.Expr, int]] = {}

    @contextmanager
    def at(self, depth: int, stmt: ir.Stmt | None = None) -> Iterator[None]:
        """Print a statement's expressions at indentation ``depth``: a long one
        may write temporaries on lines before the statement.  The checks printed
        meanwhile report ``stmt``'s location (:attr:`BoundsGuards.at`)."""
        saved, self.depth = self.depth, depth
        checks = self.guard.guards if self.guard is not None and stmt is not None \
            and not isinstance(stmt, ir.SeqStmt) else None
        located = checks.at if checks is not None else None
        if checks is not None:
            checks.at = location(stmt)
        try:
            yield
        finally:
            self.depth = saved
            if checks is not None:
                checks.at = located

    def bound(self, var: Var, lo: ir.Expr, hi: ir.Expr) -> None:
        """Record that ``var`` lies between the values of ``lo`` and ``hi`` (inclusive)."""
        low, high = self.ranges.of(lo), self.ranges.of(hi)
        if low is None or high is None:
            return
        old = self.ranges.bounds.get(var)
        new = (low[0], high[1]) if old is None else (min(old[0], low[0]), max(old[1], high[1]))
        if new != old:
            self.ranges.bounds[var] = new
            self.ranges = Ranges(self.ranges.bounds)  # forget what was computed before

    def __call__(self, expr: ir.Expr) -> str:
        return self.print(expr)[0]

    def operand(self, expr: ir.Expr, level: int) -> str:
        """``expr`` parenthesized unless it binds at least as tightly as ``level``."""
        text, own = self.print(expr)
        return text if own >= level else f"({text})"

    @guarded
    def print(self, expr: ir.Expr) -> tuple[str, int]:
        """Source text of ``expr`` and the precedence of its outermost operator."""
        if self.depth is not None and self.out is not None and self.height(expr) >= SPLIT:
            return self._long(expr)
        return self._print(expr)

    def _print(self, expr: ir.Expr) -> tuple[str, int]:
        match expr:
            case Var():
                if expr in self.subst:
                    return self.subst[expr], (UNARY if self.subst[expr].startswith("-")
                                              else ATOM)
                return self.names(expr), ATOM
            case ir.Let():
                body = self(expr.body)
                return f"(lambda {self.names(expr.var)}: {body})({self(expr.value)})", ATOM
            case ir.Select() | ir.Min() | ir.Max() if self._mixes_counter(expr):
                return self._typed_choice(expr)
        printed = self.common(expr)
        if printed is not None:
            return printed
        raise BuildError(f"the numba target cannot emit {type(expr).__name__}")

    def _mixes_counter(self, expr: ir.Expr) -> bool:
        """Whether integer ``expr`` chooses between operands one of which reads a
        parallel loop's counter.  Numba types that counter ``uint64`` in a
        ``prange`` body, and a choice between a ``uint64`` and a signed integer
        (``i if i < n else 3``, ``min(i, n)``) is a ``float64``, which no array
        takes as an index."""
        if not self.parallel_vars or not dtypes.is_int(expr.dtype) or expr.dtype == "uint64":
            return False
        return any(isinstance(v, Var) and v in self.parallel_vars for v in _walk(expr))

    def _typed_choice(self, expr: ir.Select | ir.Min | ir.Max) -> tuple[str, int]:
        """``expr`` with each operand it chooses from cast to its dtype (see
        :meth:`_mixes_counter`): the value chosen is the same, and so is its type."""
        cast = numpy_type(expr.dtype)
        if isinstance(expr, ir.Select):
            return (f"{cast}({self(expr.true_value)}) if "
                    f"{self.operand(expr.condition, OR)} else "
                    f"{cast}({self(expr.false_value)})"), COND
        fn = "min" if isinstance(expr, ir.Min) else "max"
        return f"{fn}({cast}({self(expr.a)}), {cast}({self(expr.b)}))", ATOM

    # -- long expressions -----------------------------------------------------

    def height(self, expr: ir.Expr) -> int:
        """The nesting depth of ``expr`` (1 for a leaf), computed without recursion."""
        memo = self._heights
        stack = [expr]
        while stack:
            node = stack[-1]
            hit = memo.get(id(node))
            if hit is not None and hit[0] is node:
                stack.pop()
                continue
            kids = [c for c in children(node) if isinstance(c, ir.Expr)]
            todo = [c for c in kids if memo.get(id(c), (None,))[0] is not c]
            if todo:
                stack += todo
                continue
            stack.pop()
            memo[id(node)] = (node, 1 + max((memo[id(c)][1] for c in kids), default=0))
        return memo[id(expr)][1]

    def _nesting(self, expr: ir.Expr) -> int:
        """How deeply the text last printed for ``expr`` nests (its height if inline)."""
        hit = self._pending.get(id(expr))
        return hit[1] if hit is not None and hit[0] is expr else self.height(expr)

    def _line(self, text: str) -> None:
        self.out(self.depth, text)

    @contextmanager
    def _indented(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def _temp(self, text: str, part: bool = False) -> str:
        """A new local variable holding ``text`` (computed by a helper when ``part``)."""
        name = self.names.fresh("_t")
        value = self.part(text) if part and self.part is not None else text
        self._line(f"{name} = {value}")
        return name

    def _long(self, expr: ir.Expr) -> tuple[str, int]:
        """``expr`` (``SPLIT`` deep or more) with temporaries written before the statement."""
        height = self.height
        match expr:
            case ir.Select() if max(height(expr.true_value), height(expr.false_value)) >= SPLIT:
                name = self.names.fresh("_t")
                self._line(f"if {self(expr.condition)}:")
                for keyword, branch in (("if", expr.true_value), ("else", expr.false_value)):
                    if keyword == "else":
                        self._line("else:")
                    with self._indented():
                        self._line(f"{name} = {self(branch)}")
                return self._done(expr, name, ATOM, 1)
            case ir.And() | ir.Or() if height(expr.b) >= SPLIT:
                name = self._temp(self(expr.a))
                self._line(f"if {name}:" if isinstance(expr, ir.And) else f"if not {name}:")
                with self._indented():
                    self._line(f"{name} = {self(expr.b)}")
                return self._done(expr, name, ATOM, 1)
            case ir.Let():
                self._line(f"{self.names(expr.var)} = {self(expr.value)}")
                text, level = self.print(expr.body)
                return self._done(expr, text, level, self._nesting(expr.body))
        text, level = self._print(expr)
        nesting = 1 + max((self._nesting(c) for c in children(expr) if isinstance(c, ir.Expr)),
                          default=0)
        if nesting >= SPLIT:
            return self._done(expr, self._temp(text, part=True), ATOM, 1)
        return self._done(expr, text, level, nesting)

    def _done(self, expr: ir.Expr, text: str, level: int, nesting: int) -> tuple[str, int]:
        self._pending[id(expr)] = (expr, nesting)
        return text, level

    # -- operators --------------------------------------------------------------

    def binary(self, expr: ir.Expr) -> tuple[str, int]:
        op, level = _BINARY[type(expr)]
        a, a_level = self.print(expr.a)
        b, b_level = self.print(expr.b)
        # Integer arithmetic on literals (an unrolled counter) is folded, and
        # wrapped as the executed operation would be.
        fold = _FOLD.get(type(expr))
        if (fold is not None and expr.dtype in ("int32", "int64") and _INT.fullmatch(a)
                and _INT.fullmatch(b) and (int(b) != 0 or op in "+-*")):
            return constant(wrap(fold(int(a), int(b)), expr.dtype), expr.dtype)
        # Comparisons chain in Python, so neither side may be one.
        left = level + 1 if level == COMPARE else level
        a = a if a_level >= left else f"({a})"
        b = b if b_level >= level + 1 else f"({b})"
        if (fold is not None and dtypes.is_int(expr.dtype) and expr.dtype not in _NATIVE
                and self.ranges.may_wrap(expr)):
            return f"{numpy_type(expr.dtype)}({a} {op} {b})", ATOM
        if (expr.dtype == "int64" and isinstance(expr, (ir.Add, ir.Sub, ir.Mul))
                and self.ranges.may_wrap(expr)):
            return wrapping_int64(a, op, b), ATOM
        return f"{a} {op} {b}", level

    def load_of(self, expr: ir.BufferLoad) -> str:
        return self.load(expr.buffer, expr.indices, expr.view_access)

    constant = staticmethod(constant)
    numpy_type = staticmethod(numpy_type)

    def load(self, buffer: ir.Buffer, indices, through: tuple | None = None) -> str:
        """``A[i, j]``: the text of an element of ``buffer`` (or of the local holding it);
        ``through``, the view access it was lowered from, checked where :mod:`.guards`
        says."""
        if buffer in self.scalars:
            return self.scalars[buffer]
        if self.guard is not None and self.guard.view_axes(through):
            return load_text(self.guard, self, buffer, indices, self.names(buffer), through)
        hoisted = self.hoisted.get((buffer, tuple(indices)))
        if hoisted is not None:
            text = f"{self.names(buffer)}[{self._hoisted_index(hoisted[0], indices)}]"
            zero = constant(0, buffer.dtype)[0]
            return text if hoisted[1] is None else f"({text} if {hoisted[1]} else {zero})"
        if self.guard is not None and self.guard.needs(buffer, indices):
            return load_text(self.guard, self, buffer, indices, self.names(buffer))
        texts = [self(i) for i in indices]
        if texts and self._unsigned(indices[-1], texts[-1]):
            texts[-1] = f"np.uint64({texts[-1]})"
        inner = ", ".join(texts) if texts else "()"
        return f"{self.names(buffer)}[{inner}]"

    def store(self, buffer: ir.Buffer, indices, value: ir.Expr | str,
              through: tuple | None = None) -> list[str]:
        """The lines (unindented) storing ``value`` (an expression, or the text of
        one) to ``buffer[indices]`` (or to the local holding it), checked where
        :mod:`.guards` says (``through``: the view access it was lowered from).
        The target is printed before the value."""
        def text() -> str:
            return value if isinstance(value, str) else self(value)

        if (buffer not in self.scalars and self.guard is not None
                and self.guard.view_axes(through)):
            return store_lines(self.guard, self, buffer, indices, self.names(buffer), text,
                               through)

        hoisted = self.hoisted.get((buffer, tuple(indices)))
        if buffer not in self.scalars and hoisted is not None:
            index = self._hoisted_index(hoisted[0], indices)
            target = f"{self.names(buffer)}[{index}] = {text()}"
            return [target] if hoisted[1] is None else [f"if {hoisted[1]}:", f"    {target}"]
        if (buffer not in self.scalars and self.guard is not None
                and self.guard.needs(buffer, indices)):
            return store_lines(self.guard, self, buffer, indices, self.names(buffer), text)
        target = self.load(buffer, indices)
        return [f"{target} = {text()}"]

    def _hoisted_index(self, local: list[str | None], indices) -> str:
        """The index of an access checked before the loop (:mod:`.hoist`): the locals
        of its checked axes, the others printed in place."""
        return ", ".join(h if h is not None else self(i)
                         for h, i in zip(local, indices, strict=True))

    def _unsigned(self, index: ir.Expr, text: str) -> bool:
        """Whether to write the last index as unsigned: where it is computed from a
        parallel loop's counter and is never negative.

        Numba adds an array's extent to a negative index (Python's wrap-around), a
        select on every access.  In a parallel loop's body, which Numba compiles as
        a function of the chunk's bounds, LLVM cannot see that the counter is not
        negative, keeps the select, and vectorizes the loop with gathers and
        scatters (a 1-D stencil: 5x slower than serial).  An unsigned index has no
        wrap-around; it is written only where the counters' ranges show the index
        is never negative, so it selects the same element.
        """
        if not self.parallel_vars or _INT.fullmatch(text) or not dtypes.is_int(index.dtype):
            return False
        if not any(isinstance(v, Var) and v in self.parallel_vars for v in _walk(index)):
            return False
        found = self.ranges.of(index)
        return found is not None and found[0] >= 0

    def call(self, expr: ir.Call) -> tuple[str, int]:
        if expr.op == "likely":
            return self.print(expr.args[0])
        if is_value_bitcast(expr):  # the same bits read as another type: numpy's view
            source, value = numpy_type(expr.args[1].dtype), self(expr.args[1])
            return f"{source}({value}).view({numpy_type(expr.dtype)})", ATOM
        args = [self(a) for a in expr.args]
        if expr.op in _MATH:
            return f"np.{expr.op}({args[0]})", ATOM
        if expr.op == "pow":
            return f"np.power({args[0]}, {args[1]})", ATOM
        if expr.op == "nearbyint":
            return f"np.rint({args[0]})", ATOM
        if expr.op == "isnan":
            return f"np.isnan({args[0]})", ATOM
        if expr.op == "erf":  # math.erf, of a double: back to the dtype, as the reference
            return f"{numpy_type(expr.dtype)}(_pp_erf({args[0]}))", ATOM
        if expr.op == "sigmoid":
            one = constant(1.0, expr.dtype)[0]
            return f"{one} / ({one} + np.exp(-{self.operand(expr.args[0], UNARY)}))", MUL
        if expr.op == "rsqrt":
            one = constant(1.0, expr.dtype)[0]
            return f"{one} / np.sqrt({args[0]})", MUL
        if expr.op in _BITWISE:
            return bitwise(expr.op, args, expr.dtype), ATOM
        raise BuildError(f"T.{expr.op} cannot be emitted; lowering should have removed it")
