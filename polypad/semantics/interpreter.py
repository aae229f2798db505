"""The reference executor: walks the lowered IR over numpy arrays.

It defines what a program means when it runs: slow and meant to be obviously
right.  Every compiled target is tested against it (``codegen.build(f,
target="python")`` runs it), and the analyses that refute by running
(``analyses.execution_refutation``) run it.

Values are numpy scalars of the node's dtype (:mod:`.values`), so float32 arithmetic rounds
to float32 after every operation and integers wrap at their width, as numpy
does.  Integer ``//`` and ``%`` are numpy's ``floor_divide`` and
``remainder``: floor semantics, and 0 for a zero divisor (what the Numba
kernels do under ``error_model="numpy"``).  ``Select``, ``and`` and ``or``
evaluate lazily.  Loops of every kind run in order -- a race-free parallel or
vectorized loop means the same.  ``T.alloc_buffer`` memory starts zeroed: an
arbitrary choice (reading it before writing is the program's bug), made
identical in the Numba kernels so that the two targets agree exactly.  An
access outside a buffer is a :class:`~polypad.errors.BoundsCheckError`, never
numpy's negative-index wrap-around (through a view: outside the view's own
shape, whatever the memory behind it, :mod:`.lower_views`), and a loop whose
counter would leave its dtype a :class:`~polypad.errors.LoopRangeError`
(:mod:`.loop_ranges`).  Every
``T.assume`` left in the lowered function is checked where it stands (the
reference executor is always built with ``check_assumptions``); a false one is an
:class:`~polypad.errors.AssumptionError` naming it and the values it saw.  A
plain ``assert`` is checked too (:mod:`.asserts`), as in every target.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from polypad.errors import (
    AssumptionError,
    BoundsCheckError,
    BuildError,
    InexactArithmeticError,
    PolypadError,
)
from polypad.ir import nodes as ir
from polypad.ir.deep import deep_entry, guarded
from polypad.ir.intrinsics import is_call
from polypad.ir.location import source_location
from polypad.ir.nodes import Buffer, PrimFunc, Stmt, Var
from polypad.ir.opaque import is_value_bitcast
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk

from .asserts import assert_error
from .loop_ranges import check_range
from .values import convert, numpy_dtype

_ARITH = {
    ir.Add: operator.add, ir.Sub: operator.sub, ir.Mul: operator.mul,
    ir.Div: operator.truediv, ir.FloorDiv: operator.floordiv, ir.FloorMod: operator.mod,
    ir.Min: min, ir.Max: max,
}
_COMPARE = {
    ir.Eq: operator.eq, ir.Ne: operator.ne, ir.Lt: operator.lt,
    ir.Le: operator.le, ir.Gt: operator.gt, ir.Ge: operator.ge,
}
_MATH = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "abs": np.abs, "pow": np.power,
    "nearbyint": np.rint, "erf": lambda x: math.erf(float(x)), "isnan": np.isnan,
    # numpy's integer operators are the bitwise meaning docs/semantics.md gives:
    # a shift by an amount outside [0, bits) is 0, or the sign shifting right.
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "bitwise_not": np.invert,
    "shift_left": np.left_shift, "shift_right": np.right_shift,
}


class _Interpreter:
    def __init__(self, func: PrimFunc, exact_floats: bool = False):
        self.func = func
        self.exact_floats = exact_floats
        self.env: dict[Var, object] = {}
        self.arrays: dict[Buffer, np.ndarray] = {}
        self.stmt: Stmt | None = None
        self.constants: dict[int, tuple] = {}  # id(constant node) -> (node, its scalar)

    def run(self, args: list) -> None:
        for param, value in zip(self.func.params, args, strict=True):
            if isinstance(param, Var):
                self.env[param] = convert(value, param.dtype)
            else:
                self.arrays[param] = value
        with np.errstate(all="ignore"):
            self.exec(self.func.body)

    # -- statements ---------------------------------------------------------

    @guarded
    def exec(self, stmt: Stmt) -> None:
        self.stmt = stmt
        match stmt:
            case ir.SeqStmt():
                for s in stmt.stmts:
                    self.exec(s)
            case ir.For():
                lo, extent = int(self.eval(stmt.min)), int(self.eval(stmt.extent))
                check_range(self.func, stmt, lo, extent)  # never wrap the counter
                for value in range(lo, lo + extent):
                    self.env[stmt.var] = convert(value, stmt.var.dtype)
                    self.exec(stmt.body)
                self.env.pop(stmt.var, None)
            case ir.IfThenElse():
                if self.eval(stmt.condition):
                    self.exec(stmt.then_case)
                elif stmt.else_case is not None:
                    self.exec(stmt.else_case)
            case ir.BufferStore():
                # TVM's order (CodeGenLLVM's BufferStore): the value, then the
                # indices, then the element's bounds (docs/bounds.md).
                value = self.eval(stmt.value)
                if stmt.view_access is not None:
                    self.check_view(stmt.view_access, "store to")
                index = self.index(stmt.buffer, stmt.indices, "store to")
                self.arrays[stmt.buffer][index] = value
            case ir.LetStmt():
                self.env[stmt.var] = self.eval(stmt.value)
                self.exec(stmt.body)
                del self.env[stmt.var]
            case ir.Evaluate() if is_call(stmt.value, "assume"):
                if not self.eval(stmt.value.args[0]):
                    raise assumption_error(self.func, stmt, self.env, self.arrays)
            case ir.Evaluate():
                self.eval(stmt.value)
            case ir.Assert():  # a plain assert lowering kept: always checked
                if not self.eval(stmt.condition):
                    raise assert_error(self.func, stmt, self.env)
            case ir.Block():
                self.exec(stmt.body)
            case ir.Allocate():
                shape = tuple(int(self.eval(e)) if isinstance(e, Var) else e
                              for e in stmt.buffer.shape)
                self.arrays[stmt.buffer] = np.zeros(shape, numpy_dtype(stmt.buffer.dtype))
                self.exec(stmt.body)
                del self.arrays[stmt.buffer]
            case ir.DeclBuffer():
                # After lowering (.lower_views), a flat view of a whole buffer:
                # the array reshaped, which shares its memory.
                self.arrays[stmt.buffer] = self.arrays[stmt.buffer.data].reshape(-1)
                self.exec(stmt.body)
                del self.arrays[stmt.buffer]
            case _:
                raise BuildError(f"the reference executor cannot run {type(stmt).__name__}")

    def index(self, buffer: Buffer, indices, what: str) -> tuple[int, ...]:
        array = self.arrays[buffer]
        index = tuple([int(self.eval(i)) for i in indices])
        inside = len(index) == array.ndim
        for k, extent in zip(index, array.shape, strict=False):
            if not 0 <= k < extent:
                inside = False
        if not inside:
            raise BoundsCheckError(outside_message(
                what, buffer, indices, index, array.shape, self.func.name,
                source_location(self.stmt)))
        return index

    def check_view(self, through: tuple, what: str) -> None:
        """A :class:`BoundsCheckError` unless the indices of an access lowered from a
        view (its ``view_access``: the view and the indices as written) are inside
        the view's own shape, checked before its flat index (:mod:`.lower_views`)."""
        view, indices = through
        index = [int(self.eval(i)) for i in indices]
        shape = tuple(int(self.env[d]) if isinstance(d, Var) else d for d in view.shape)
        if not all(0 <= k < extent for k, extent in zip(index, shape, strict=True)):
            raise BoundsCheckError(outside_message(
                what, view, indices, index, shape, self.func.name,
                source_location(self.stmt)))

    # -- expressions --------------------------------------------------------

    def eval(self, expr: ir.Expr):
        kind = type(expr)
        if kind is Var:  # the leaves, most of what is evaluated, go without a frame more
            return self.env[expr]
        if kind is ir.IntImm or kind is ir.FloatImm:
            found = self.constants.get(id(expr))
            if found is None or found[0] is not expr:
                found = self.constants[id(expr)] = (expr, convert(expr.value, expr.dtype))
            return found[1]
        return self._eval(expr)

    @guarded
    def _eval(self, expr: ir.Expr):
        match expr:  # the frequent cases first: a match tries them in order
            case ir.BufferLoad():
                if expr.view_access is not None:
                    self.check_view(expr.view_access, "load of")
                return self.arrays[expr.buffer][self.index(expr.buffer, expr.indices, "load of")]
            case ir.BinaryOp():
                result = _ARITH[type(expr)](self.eval(expr.a), self.eval(expr.b))
                result = convert(result, expr.dtype)
                if self.exact_floats and result.dtype.kind == "f":
                    self.check_exact(result, expr)
                return result
            case ir.Compare():
                return np.bool_(_COMPARE[type(expr)](self.eval(expr.a), self.eval(expr.b)))
            case ir.And():
                return np.bool_(bool(self.eval(expr.a)) and bool(self.eval(expr.b)))
            case ir.Or():
                return np.bool_(bool(self.eval(expr.a)) or bool(self.eval(expr.b)))
            case ir.Not():
                return np.bool_(not self.eval(expr.a))
            case ir.Select():
                chosen = expr.true_value if self.eval(expr.condition) else expr.false_value
                return self.eval(chosen)
            case ir.Cast():
                return convert(self.eval(expr.value), expr.dtype)
            case ir.BoolImm():
                return np.bool_(expr.value)
            case ir.Call():
                return self.call(expr)
            case ir.Let():
                saved = self.env.get(expr.var, _UNBOUND)
                self.env[expr.var] = self.eval(expr.value)
                result = self.eval(expr.body)
                if saved is _UNBOUND:
                    del self.env[expr.var]
                else:
                    self.env[expr.var] = saved
                return result
        raise BuildError(f"the reference executor cannot evaluate {type(expr).__name__}")

    def check_exact(self, value, expr: ir.Expr) -> None:
        """An :class:`InexactArithmeticError` unless ``value`` is an integer the float
        dtype holds exactly, together with every integer of smaller magnitude."""
        limit = _EXACT_INTEGERS.get(value.dtype.itemsize)
        if limit is None or not abs(value) < limit or value != np.floor(value):
            raise InexactArithmeticError(
                f"{show(expr).strip()} gave {value} in {self.func.name!r}"
                f"{source_location(self.stmt)}: "
                f"not an integer below {limit} in magnitude, where {value.dtype} may round")

    def call(self, expr: ir.Call):
        if expr.op == "likely":
            return self.eval(expr.args[0])
        if is_value_bitcast(expr):  # the same bits read as another type
            value = np.asarray(self.eval(expr.args[1]), numpy_dtype(expr.args[1].dtype))
            return value.view(numpy_dtype(expr.dtype))[()]
        args = [self.eval(a) for a in expr.args]
        if expr.op == "sigmoid":
            one = convert(1, expr.dtype)
            return convert(one / (one + np.exp(-args[0])), expr.dtype)
        if expr.op == "rsqrt":
            return convert(convert(1, expr.dtype) / np.sqrt(args[0]), expr.dtype)
        if expr.op in _MATH:
            return convert(_MATH[expr.op](*args), expr.dtype)
        raise BuildError(f"T.{expr.op} cannot be executed; lowering should have removed it")


_UNBOUND = object()
#: Float width in bytes -> the bound below which it holds every integer exactly.
_EXACT_INTEGERS = {4: 2.0 ** 24, 8: 2.0 ** 53}


def outside_message(what: str, buffer: Buffer, indices, values, shape, func_name: str,
                    where: str) -> str:
    """What a :class:`BoundsCheckError` says, in the reference executor and in a
    compiled kernel alike: ``load of B[-128] is outside its shape (128,) in 'f' at
    f.py:5 (as written: B[T.min(i + 2, n - 1)])`` -- the element, then the access as
    written."""
    written = ", ".join(show(i).strip() for i in indices)
    extents = ", ".join(str(x) for x in shape) + ("," if len(shape) == 1 else "")
    return (f"{what} {buffer.name}[{', '.join(str(int(v)) for v in values)}] is outside its "
            f"shape ({extents}) in {func_name!r}{where} "
            f"(as written: {buffer.name}[{written}])")


def _python(value):
    """A numpy scalar as the Python number it holds (for messages and ``values``)."""
    return value.item() if isinstance(value, np.generic) else value


def assumption_error(func: PrimFunc, stmt: ir.Evaluate, env: dict[Var, object],
                     arrays: dict[Buffer, np.ndarray]) -> AssumptionError:
    """The error for ``T.assume`` statement ``stmt`` of ``func`` found false.

    ``env`` and ``arrays`` are the variable values and buffers at that point
    (those the Numba kernel reports, for its checks).  The message shows the
    assumption, the values of its free variables and, where they can be read
    (the element is inside its buffer, the buffer is at hand), of the
    elements it loads::

        T.assume(A[i] == 0.0) is false in 'f' at f.py:7: i = 2, A[2] = 1.5
    """
    cond = stmt.value.args[0]
    values: dict[str, object] = {}
    for var in free_vars(cond):
        if var in env:
            values[var.name] = _python(env[var])
    reader = _Interpreter(func)
    reader.env, reader.arrays = dict(env), dict(arrays)
    for node in walk(cond):
        if not isinstance(node, ir.BufferLoad) or node.buffer not in arrays:
            continue
        try:
            index = reader.index(node.buffer, node.indices, "load of")
        except (PolypadError, KeyError):
            continue  # an element outside the buffer, or an index over a let of the condition
        element = f"{node.buffer.name}[{', '.join(map(str, index))}]"
        values.setdefault(element, _python(arrays[node.buffer][index]))
    shown = ", ".join(f"{name} = {value}" for name, value in values.items())
    return AssumptionError(
        f"{show(stmt).strip()} is false in {func.name!r}{source_location(stmt)}"
        + (f": {shown}" if shown else ""), assumption=cond, values=values)


@deep_entry
def run(func: PrimFunc, *args, exact_floats: bool = False) -> None:
    """Execute ``func`` (lowered) on checked arguments, updating arrays in place.

    With ``exact_floats``, every float result of ``+``, ``-``, ``*``, ``min`` and
    ``max`` must be an integer that its dtype holds exactly (below 2**24 in
    magnitude for float32, 2**53 for float64), else an
    :class:`~polypad.errors.InexactArithmeticError`: a run on integer inputs that
    passes computed what the same program computes over the reals."""
    _Interpreter(func, exact_floats).run(list(args))


def evaluate(func: PrimFunc, expr: ir.Expr, env: dict[Var, object]):
    """``expr`` of ``func`` where ``env`` gives its variables' values (numpy scalars of
    their dtypes), as :func:`run` computes it."""
    reader = _Interpreter(func)
    reader.env = dict(env)
    with np.errstate(all="ignore"):
        return reader.eval(expr)
