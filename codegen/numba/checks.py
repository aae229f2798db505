"""Run-time checks in Numba kernels, and what their failures become.

Numba can raise only an exception whose class it knows, but it passes
run-time values along, so every check the emitter writes raises an
``AssertionError`` whose first argument says which kind of check failed and
whose others carry the values.  The kernel's call wrapper hands what the
kernel raised to :func:`kernel_error`, which turns it into the polypad error
the reference executor raises for the same failure.

- The bounds precondition (:mod:`codegen.precondition`), once, in the
  kernel's first lines::

      if not (n < 29):
          raise AssertionError("polypad.precondition", n)

  becomes the :class:`~polypad.errors.OutOfBoundsError` of
  :meth:`~codegen.precondition.CallCheck.error`.
- An assumption kept by lowering (``check_assumptions=True``), where it
  stands; the second argument numbers it (its place in
  :func:`~polypad.semantics.lowering.checked_assumptions`), the rest are the
  values of its free variables
  (:func:`~polypad.ir.substitute.free_vars`)::

      if not (n < 8):
          raise AssertionError("polypad.assume", 0, n)

  It becomes the :class:`~polypad.errors.AssumptionError` the reference
  executor raises: the assumption in script syntax, the variables, and the
  elements it reads, read from the argument arrays.
- A plain ``assert`` (always: it is part of the program), where it stands;
  the second argument numbers it (its place in
  :func:`~polypad.semantics.asserts.run_asserts`), the rest are the values of
  its free variables::

      if not (n % 4 == 0):
          raise AssertionError("polypad.assert", 0, n)

  It becomes the :class:`~polypad.errors.AssertionFailedError` of
  :func:`~polypad.semantics.asserts.assert_error`.
- A loop whose range may not fit its counter's dtype
  (:func:`codegen.loop_ranges.checked_loops`), before the loop::

      if n > 2147483647 - (10 - 1):
          raise AssertionError("polypad.loop_range", 0, n, 10)

  The test is written so that it cannot overflow itself in 64 bits, and only
  its sides that may fail are written.  It becomes the
  :class:`~polypad.errors.LoopRangeError` of
  :func:`~polypad.semantics.loop_ranges.range_error`.

- An access the bounds analysis could not prove inside its buffer
  (:mod:`.guards`), where it runs::

      raise AssertionError("polypad.bounds", 0, i0)

  with the check's number (:meth:`codegen.bounds_guards.BoundsGuards.number`)
  and the index on each axis.  It becomes the
  :class:`~polypad.errors.BoundsCheckError` the reference executor raises for
  that access, with the shape of the argument array.  Inside a parallel loop
  the check records the failure in a flag array and the same error is raised
  after the loop, so the loop stays parallel.

Under ``boundscheck=True`` Numba raises a bare ``IndexError``, which becomes
a :class:`~polypad.errors.BoundsCheckError`.

A parallel loop that holds any other check runs serially: Numba does not
parallelize a loop that may raise, and an exception raised from a parallel
region reaches Python as a ``SystemError``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from polypad.errors import BoundsCheckError, PolypadError
from polypad.ir import nodes as ir
from polypad.ir.nodes import Buffer, PrimFunc
from polypad.ir.substitute import free_vars
from polypad.model.ranges import dtype_range
from polypad.semantics.asserts import assert_error, run_asserts
from polypad.semantics.interpreter import assumption_error
from polypad.semantics.loop_ranges import range_error
from polypad.semantics.lowering import checked_assumptions
from polypad.semantics.values import convert

from ..bounds_guards import BoundsGuards, bounds_error
from ..loop_ranges import checked_loops
from ..precondition import CallCheck, exact_source
from ..source_text import ADD
from .guards import MARKER as BOUNDS_MARKER
from .pyexpr import ExprPrinter, constant

#: The first argument of the ``AssertionError`` each kind of failed check raises.
MARKER = "polypad.assume"
RANGE_MARKER = "polypad.loop_range"
PRECONDITION_MARKER = "polypad.precondition"
ASSERT_MARKER = "polypad.assert"


def check_lines(stmt: ir.Evaluate, number: int, expr: ExprPrinter) -> list[str]:
    """The two lines (unindented) that check assumption ``stmt``, number ``number``."""
    return _raising_lines(MARKER, number, stmt.value.args[0], expr)


def assert_lines(stmt: ir.Assert, number: int, expr: ExprPrinter) -> list[str]:
    """The two lines (unindented) that run plain assert ``stmt``, number ``number``."""
    return _raising_lines(ASSERT_MARKER, number, stmt.condition, expr)


def _raising_lines(marker: str, number: int, cond: ir.Expr, expr: ExprPrinter) -> list[str]:
    """Raise ``marker``'s AssertionError with ``number`` and the values of ``cond``'s
    variables where ``cond`` is false (:func:`kernel_error` reads them back)."""
    args = [repr(marker), str(number), *(expr(v) for v in free_vars(cond))]
    return [f"if not ({expr(cond)}):", f"    raise AssertionError({', '.join(args)})"]


def range_check_lines(loop: ir.For, number: int, low: bool, high: bool,
                      expr: ExprPrinter) -> list[str]:
    """The two lines (unindented) that check ``loop``'s range, check number ``number``.

    ``low`` and ``high`` say which sides to test.  ``min > HI - (extent - 1)``
    rather than ``min + extent - 1 > HI``: with ``extent > 0`` it stays inside
    64 bits for 64-bit operands.
    """
    dtype = loop.var.dtype
    lo, hi = dtype_range(dtype)
    first, extent = expr.operand(loop.min, ADD + 1), expr.operand(loop.extent, ADD + 1)
    one = constant(1, loop.extent.dtype)[0]
    tests = []
    if low:
        tests.append(f"{first} < {constant(lo, dtype)[0]}")
    if high:
        tests.append(f"{first} > {constant(hi, dtype)[0]} - ({extent} - {one})")
    condition = tests[0] if len(tests) == 1 else f"({' or '.join(tests)})"
    if not (isinstance(loop.extent, ir.IntImm) and loop.extent.value > 0):
        condition = f"{extent} > {constant(0, loop.extent.dtype)[0]} and {condition}"
    args = ", ".join([repr(RANGE_MARKER), str(number), expr(loop.min), expr(loop.extent)])
    return [f"if {condition}:", f"    raise AssertionError({args})"]


def precondition_lines(check: CallCheck, name: Callable[[ir.Var], str]) -> list[str]:
    """The two lines (unindented) that test the bounds precondition in the kernel.

    Only for a ``check`` whose condition 64-bit integers compute exactly
    (:attr:`~codegen.precondition.CallCheck.fits_int64`), as Numba's do.
    """
    args = ", ".join([repr(PRECONDITION_MARKER), *(name(v) for v in check.variables)])
    text = exact_source(check.condition, name)
    if not text.startswith("("):  # every other form starts with its own parenthesis
        text = f"({text})"
    return [f"if not {text}:",
            f"    raise AssertionError({args})"]


def kernel_error(func: PrimFunc, precondition: CallCheck | None,
                 guards: BoundsGuards | None, error: BaseException,
                 args: list) -> PolypadError | None:
    """The polypad error for what the Numba kernel of lowered ``func`` raised, or None.

    ``precondition`` is the bounds precondition the kernel tests itself, if
    any, ``guards`` the accesses it checks (:mod:`.guards`), if any; ``args``
    are the (checked) arguments of the call, and the buffers among them hold
    the state the kernel stopped in.
    """
    kind = error.args[0] if isinstance(error, AssertionError) and error.args else None
    if kind == PRECONDITION_MARKER and precondition is not None:
        return precondition.error([int(v) for v in error.args[1:]])
    if kind == BOUNDS_MARKER and guards is not None:
        return bounds_error(func, guards, int(error.args[1]), error.args[2:], args)
    if kind == MARKER:
        stmt = checked_assumptions(func)[error.args[1]]
        variables = free_vars(stmt.value.args[0])
        env = {v: convert(value, v.dtype)
               for v, value in zip(variables, error.args[2:], strict=True)}
        arrays = {p: a for p, a in zip(func.params, args, strict=True)
                  if isinstance(p, Buffer) and isinstance(a, np.ndarray)}
        return assumption_error(func, stmt, env, arrays)
    if kind == ASSERT_MARKER:
        stmt = run_asserts(func)[error.args[1]]
        env = {v: convert(value, v.dtype)
               for v, value in zip(free_vars(stmt.condition), error.args[2:], strict=True)}
        return assert_error(func, stmt, env)
    if kind == RANGE_MARKER:
        number, first, extent = error.args[1:4]
        loop = next(entry[1] for entry in checked_loops(func).values() if entry[0] == number)
        return range_error(func, loop, int(first), int(extent))
    if isinstance(error, IndexError):
        return BoundsCheckError(
            f"the kernel of {func.name!r} accessed a buffer outside its shape (Numba "
            f"boundscheck: {error}); the reference executor, codegen.build(f, "
            "target='python'), names the access and the indices")
    return None

