"""IR expressions as the Python source text of a ``numba.cuda`` kernel.

The rules are the reference executor's meaning, spelled for Numba's CUDA
target (the Numba CPU target has its own printer; the two share only
:mod:`codegen.source_text`, constants and precedence):

- float32 constants and casts are ``np.float32(...)`` (a bare ``2.0`` is a
  float64 and would promote the expression, on a GPU a costly one);
- integer ``//`` and ``%`` are Python's operators, which Numba gives floor
  semantics on every target;
- an integer operation of a narrow dtype that may leave its range (interval
  arithmetic over the loop ranges in scope, :mod:`polypad.model.ranges`) is
  wrapped in its dtype's constructor, since Numba computes in 64 bits; an
  ``int64`` ``+``, ``-`` or ``*`` that may wrap is computed in ``uint64``
  (``np.int64(np.uint64(np.int64(a)) + np.uint64(np.int64(b)))``), as the
  Numba target does, since LLVM assumes a signed one never overflows;
- math intrinsics are the ``math`` module's functions, which Numba maps to
  libdevice on the GPU; ``Select``, ``and`` and ``or`` stay lazy;
- a value bit cast (``T.reinterpret``) is a call of :mod:`.bits`, since
  numba.cuda has no ``view`` of a scalar;
- a shift by an amount not proved in ``[0, bits)`` is a call of a device function
  of the module (:mod:`.shifts`), which tests the amount.

An expression ``Let`` is refused: a CUDA kernel has no closures to inline.
"""

from __future__ import annotations

from polypad.errors import BuildError
from polypad.ir import dtypes
from polypad.ir import nodes as ir
from polypad.ir.naming import Names as _Names
from polypad.ir.opaque import is_value_bitcast
from polypad.model.ranges import Ranges, wrap

from ..source_text import ADD, ATOM, BINARY, COMPARE, MUL, UNARY, CommonExprs, wrapping_int64
from ..source_text import constant as source_constant
from ..source_text import numpy_type as source_numpy_type
from .guards import CudaGuards, load_text
from .scalars import ElementAccesses
from .shifts import helper_name as shift_helper

_BINARY = BINARY
_WRAPPING = (ir.Add, ir.Sub, ir.Mul)
_MATH = {"exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "ceil", "erf", "isnan"}
_BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
_SHIFTS = {"shift_left": "<<", "shift_right": ">>"}

#: Names the generated module uses, so no variable may take them.
RESERVED = frozenset({"np", "math", "cuda", "range", "min", "max", "abs", "run", "KERNELS"})


class Names(_Names):
    """Python identifiers for the variables and buffers of the kernel source."""

    def __init__(self):
        super().__init__(reserved=RESERVED)

    def sanitize(self, hint: str) -> str:
        base = super().sanitize(hint)
        return "v" + base if base.startswith(("_pp_", "kernel_", "launch_")) else base


def numpy_type(dtype: str) -> str:
    """``np.float32`` for ``"float32"``."""
    return source_numpy_type(dtype, "cuda")


def constant(value, dtype: str) -> tuple[str, int]:
    """Source text and precedence of a constant of ``dtype`` (``math.nan``, ``math.inf``:
    a GPU kernel's module has them without numpy's globals)."""
    return source_constant(value, dtype, "cuda", module="math")


class ExprPrinter(CommonExprs):
    """Prints expressions of one kernel; ``ranges`` holds the loop ranges in scope."""

    def __init__(self, names: Names):
        self.names = names
        self.ranges = Ranges()
        #: Local buffers cut to each thread's box (:mod:`.compact`): per dimension the
        #: box's first element and the stride, ``(index - first) // stride``.
        self.offsets: dict[ir.Buffer, list[tuple[ir.Expr, int]]] = {}
        #: The box index of each access isl could write directly (by ``id`` of the node).
        self.direct: dict[int, tuple[ir.Expr, ...]] = {}
        #: Elements kept in a register for the length of a loop: ``(buffer, indices)`` to
        #: the register's name (:mod:`.emit`).
        self.registers: dict[tuple, str] = {}
        #: Loads moved before the copies of an unrolled nest: their text to the register
        #: holding the value (:mod:`.batch`).
        self.moved: dict[str, str] = {}
        #: The counters of the unrolled loop being written out, at their values.
        self.constants: dict[ir.Var, int] = {}
        #: Whether a local buffer may become one variable per element (:mod:`.scalars`);
        #: set by :mod:`.emit`.
        self.scalarizable = lambda buffer: False
        #: The accesses of such buffers, each printed as a placeholder that the kernel
        #: resolves once every access is known (:mod:`.scalars`).
        self.elements = ElementAccesses()
        #: The run-time bounds checks to write (:mod:`.guards`), or None.
        self.guard: CudaGuards | None = None
        #: Whether a value bit cast was printed: the module imports :mod:`.bits`.
        self.uses_bits = False
        #: The guarded shifts printed, ``(op, dtype)``: the module defines their
        #: device functions (:mod:`.shifts`).
        self.shifts: set[tuple[str, str]] = set()

    def bound(self, var: ir.Var, lo: ir.Expr, hi: ir.Expr) -> None:
        """Record that ``var`` lies between the values of ``lo`` and ``hi`` (inclusive)."""
        low, high = self.ranges.of(lo), self.ranges.of(hi)
        if low is not None and high is not None:
            self.ranges.bounds[var] = (low[0], high[1])
            self.ranges = Ranges(self.ranges.bounds)

    def __call__(self, expr: ir.Expr) -> str:
        return self.print(expr)[0]

    def operand(self, expr: ir.Expr, level: int) -> str:
        """``expr`` parenthesized unless it binds at least as tightly as ``level``."""
        text, own = self.print(expr)
        return text if own >= level else f"({text})"

    def print(self, expr: ir.Expr) -> tuple[str, int]:
        """Source text of ``expr`` and the precedence of its outermost operator."""
        if self.constants and isinstance(expr, (ir.Add, ir.Sub, ir.Mul, ir.FloorDiv,
                                                ir.FloorMod)):
            folded = self.fold(expr)
            if folded is not expr:
                return self.print(folded)
        match expr:
            case ir.Var() if expr in self.constants:
                return constant(self.constants[expr], expr.dtype)
            case ir.Var():
                return self.names(expr), ATOM
            case ir.Cast(value=value) if _may_not_fit(value.dtype, expr.dtype):
                # Through its own type first: a no-op on a GPU, where the value already
                # has it; on the simulator a scalar argument is a Python int, which
                # np.int32 refuses out of range where np.int32 of an np.int64 wraps.
                inner = f"{numpy_type(value.dtype)}({self(value)})"
                return f"{numpy_type(expr.dtype)}({inner})", ATOM
        printed = self.common(expr)
        if printed is not None:
            return printed
        raise BuildError(f"the cuda target cannot emit {type(expr).__name__}")

    def binary(self, expr: ir.Expr) -> tuple[str, int]:
        op, level = _BINARY[type(expr)]
        left = level + 1 if level == COMPARE else level  # comparisons chain in Python
        a, b = self.operand(expr.a, left), self.operand(expr.b, level + 1)
        if (isinstance(expr, _WRAPPING) and dtypes.is_int(expr.dtype)
                and expr.dtype not in ("int64", "uint64") and self.ranges.may_wrap(expr)):
            # Through int64, a no-op on a GPU (Numba computes in 64 bits): on the
            # simulator a scalar argument is a Python int, and np.int32 of one out of
            # range raises where np.int32 of an np.int64 wraps.
            return f"{numpy_type(expr.dtype)}(np.int64({a} {op} {b}))", ATOM
        if (isinstance(expr, _WRAPPING) and expr.dtype == "int64"
                and self.ranges.may_wrap(expr)):
            a, b = self.operand(expr.a, 0), self.operand(expr.b, 0)
            return wrapping_int64(a, op, b, numpy_operands=True), ATOM
        return f"{a} {op} {b}", level

    def load(self, buffer: ir.Buffer, indices, node=None) -> str:
        """``A[i, j]`` (``A[(i - lo) // s, ...]`` for a buffer cut to a thread's box, or
        the index in the box isl wrote for ``node``; a register's name for an element
        kept in one)."""
        register = self.registers.get((buffer, tuple(indices)))
        if register is not None:
            return register
        direct = self.direct.get(id(node)) if node is not None else None
        if self.checked(buffer, indices, node):
            zero = constant(0, buffer.dtype)[0]
            text = load_text(self.guard, self, buffer, [self.fold(i) for i in indices],
                             self.names(buffer), zero,
                             getattr(node, "view_access", None))
            return self.moved.get(text, text)
        if direct is not None:
            folded = [self.fold(i) for i in direct]
            text = f"{self.names(buffer)}[{', '.join(self(i) for i in folded)}]"
            return self.element(buffer, folded, text)
        offsets = self.offsets.get(buffer)
        indices = [self.fold(i) for i in indices]
        texts = [self(i) for i in indices]
        if offsets is not None:
            for k, (index, (first, stride)) in enumerate(zip(indices, offsets)):
                if not (isinstance(first, ir.IntImm) and first.value == 0):
                    texts[k] = f"{self.operand(index, ADD)} - {self.operand(first, MUL)}"
                if stride != 1:
                    texts[k] = f"({texts[k]}) // {stride}"
        inner = ", ".join(texts) if texts else "0"
        text = f"{self.names(buffer)}[{inner}]"
        if self.scalarizable(buffer):
            within = [ir.FloorDiv(ir.Sub(i, first), ir.IntImm(stride, i.dtype))
                      for i, (first, stride) in zip(indices, offsets)] if offsets else indices
            return self.element(buffer, within, text)
        return self.moved.get(text, text)

    def element(self, buffer: ir.Buffer, indices: list, text: str) -> str:
        """``text``, the access of ``buffer`` at the folded ``indices``, or a placeholder
        for it where ``buffer`` may become one variable per element."""
        if not self.scalarizable(buffer):
            return text
        folded = [_fold(i, self.constants) if dtypes.is_int(i.dtype) else i for i in indices]
        return self.elements.access(buffer, folded, text)

    def checked(self, buffer: ir.Buffer, indices, node=None) -> bool:
        """Whether the access ``buffer[indices]`` is checked at run time (:mod:`.guards`):
        one the plan names, of a whole buffer, not kept in a register."""
        return (self.guard is not None and self.guard.needs(buffer, indices)
                and (buffer, tuple(indices)) not in self.registers
                and (node is None or id(node) not in self.direct)
                and buffer not in self.offsets and not self.scalarizable(buffer))

    def load_of(self, expr: ir.BufferLoad) -> str:
        return self.load(expr.buffer, expr.indices, expr)

    constant = staticmethod(constant)
    numpy_type = staticmethod(numpy_type)

    def fold(self, expr: ir.Expr) -> ir.Expr:
        """An integer index with the unrolled counters put in and its constant parts
        folded (``i_2 + 4 * 1`` is ``i_2 + 4``), so that the source reads as written by
        hand; Python's integers do the arithmetic, so the value is the same."""
        if not self.constants or not dtypes.is_int(expr.dtype):
            return expr
        return _fold(expr, self.constants)

    def call(self, expr: ir.Call) -> tuple[str, int]:
        if expr.op == "likely":
            return self.print(expr.args[0])
        if is_value_bitcast(expr):  # the same bits read as another type (.bits)
            source, value = numpy_type(expr.args[1].dtype), self(expr.args[1])
            self.uses_bits = True
            return f"_pp_bits.as_{expr.dtype}({source}({value}))", ATOM
        args = [self(a) for a in expr.args]
        if expr.op in _MATH:
            return f"math.{expr.op}({args[0]})", ATOM
        if expr.op == "abs":
            return f"abs({args[0]})", ATOM
        if expr.op == "pow":
            return f"{self.operand(expr.args[0], ATOM)} ** {self.operand(expr.args[1], UNARY)}", \
                UNARY
        one = constant(1.0, expr.dtype)[0] if dtypes.is_float(expr.dtype) else "1"
        if expr.op == "sigmoid":
            return f"{one} / ({one} + math.exp(-{self.operand(expr.args[0], UNARY)}))", MUL
        if expr.op == "rsqrt":
            return f"{one} / math.sqrt({args[0]})", MUL
        if expr.op in _BITWISE:
            return f"{numpy_type(expr.dtype)}(({args[0]}) {_BITWISE[expr.op]} ({args[1]}))", \
                ATOM
        if expr.op == "bitwise_not":
            return f"{numpy_type(expr.dtype)}(~({args[0]}))", ATOM
        if expr.op in _SHIFTS:
            return self.shift(expr, args), ATOM
        raise BuildError(f"the cuda target cannot emit T.{expr.op}")

    def shift(self, expr: ir.Call, args: list[str]) -> str:
        """A shift with numpy's meaning (docs/semantics.md), cast back to its dtype since
        Numba shifts in 64 bits.  LLVM leaves a shift by the width or more undefined,
        so an amount not known to lie in ``[0, bits)`` is tested where it runs, in a
        device function of the module that takes each operand once (:mod:`.shifts`)."""
        cast, bits = numpy_type(expr.dtype), dtypes.bits(expr.dtype)
        amount = self.ranges.of(expr.args[1])
        if amount is not None and 0 <= amount[0] and amount[1] < bits:
            return f"{cast}(({args[0]}) {_SHIFTS[expr.op]} ({args[1]}))"
        self.shifts.add((expr.op, expr.dtype))
        return f"{shift_helper(expr.op, expr.dtype)}({args[0]}, {args[1]})"


_FOLD = {ir.Add: lambda a, b: a + b, ir.Sub: lambda a, b: a - b, ir.Mul: lambda a, b: a * b}


def _may_not_fit(source: str, target: str) -> bool:
    """Whether an integer cast from ``source`` to ``target`` may meet a value outside
    ``target``'s range (a narrower type, or one of the other signedness)."""
    if not (dtypes.is_int(source) and dtypes.is_int(target)) or source == target:
        return False
    signed_source, signed_target = not source.startswith("u"), not target.startswith("u")
    if signed_source == signed_target:
        return dtypes.bits(target) < dtypes.bits(source)
    return signed_source or dtypes.bits(target) <= dtypes.bits(source)


def _fold(expr: ir.Expr, constants: dict) -> ir.Expr:
    """``expr`` with ``constants`` substituted and its constant sums and products folded
    (only ``+``, ``-``, ``*`` of int32/int64: an int32 one only where Python's value
    fits, an int64 one wrapped to 64 bits as the kernel's arithmetic wraps)."""
    match expr:
        case ir.Var() if expr in constants:
            return ir.IntImm(constants[expr], expr.dtype)
        case ir.Add() | ir.Sub() | ir.Mul() if expr.dtype in ("int32", "int64"):
            a, b = _fold(expr.a, constants), _fold(expr.b, constants)
            if isinstance(a, ir.IntImm) and isinstance(b, ir.IntImm):
                value = _FOLD[type(expr)](a.value, b.value)
                if expr.dtype == "int64":  # wraps, as the kernel's int64 arithmetic does
                    return ir.IntImm(wrap(value, expr.dtype), expr.dtype)
                if -2 ** 31 <= value < 2 ** 31:
                    return ir.IntImm(value, expr.dtype)
            if isinstance(expr, ir.Mul) and any(isinstance(x, ir.IntImm) and x.value == 0
                                                for x in (a, b)):
                return ir.IntImm(0, expr.dtype)
            if isinstance(expr, ir.Mul) and isinstance(a, ir.IntImm) and a.value == 1:
                return b
            if isinstance(expr, (ir.Mul,)) and isinstance(b, ir.IntImm) and b.value == 1:
                return a
            if isinstance(expr, (ir.Add, ir.Sub)) and isinstance(b, ir.IntImm) and b.value == 0:
                return a
            if isinstance(expr, ir.Add) and isinstance(a, ir.IntImm) and a.value == 0:
                return b
            return expr if a is expr.a and b is expr.b else type(expr)(a, b)
        case ir.FloorDiv() | ir.FloorMod() if expr.dtype in ("int32", "int64"):
            a, b = _fold(expr.a, constants), _fold(expr.b, constants)
            if isinstance(b, ir.IntImm) and b.value > 0:
                if isinstance(a, ir.IntImm):
                    value = a.value // b.value if isinstance(expr, ir.FloorDiv) \
                        else a.value % b.value
                    return ir.IntImm(value, expr.dtype)
                # (c + r) // k == c // k + r // k and (c + r) % k == r % k where k divides
                # the constant c: floor division by a positive k, exact for every r.
                c, rest = split_constant(a)
                if rest is not None and c % b.value == 0 and c != 0:
                    if isinstance(expr, ir.FloorMod):
                        return ir.FloorMod(rest, b)
                    return ir.Add(ir.IntImm(c // b.value, expr.dtype), ir.FloorDiv(rest, b))
            return expr if a is expr.a and b is expr.b else type(expr)(a, b)
    return expr


def split_constant(expr: ir.Expr) -> tuple[int, ir.Expr | None]:
    """``expr`` as a constant plus the rest of its sum (None: nothing but the constant)."""
    match expr:
        case ir.IntImm():
            return expr.value, None
        case ir.Add():
            ca, ra = split_constant(expr.a)
            cb, rb = split_constant(expr.b)
            if ra is None or rb is None:
                return ca + cb, ra if rb is None else rb
            return ca + cb, ir.Add(ra, rb)
    return 0, expr
