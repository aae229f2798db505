"""Run-time checks in Numba kernels: ``T.assume`` and ``boundscheck``.

An assumption kept by lowering (``check_assumptions=True``, see
:mod:`.lower`) is emitted where it stands as::

    if not (n < 8):
        raise AssertionError("polypad.assume", 0, n)

Numba can raise only an exception whose class it knows, but it passes
run-time values along: the second argument numbers the assumption (its
place in :func:`~polypad.semantics.lowering.checked_assumptions`), the rest
are the values of its free variables
(:func:`~polypad.semantics.interpreter.free_vars`).  The kernel's call
wrapper hands what the kernel raised to :func:`kernel_error`, which turns it
into the :class:`~polypad.errors.AssumptionError` the reference executor
raises for the same failure -- the assumption in script syntax, the
variables, and the elements it reads, read from the argument arrays.  A
failed loop range check (:mod:`.loop_ranges`) becomes a
:class:`~polypad.errors.LoopRangeError`.  Under ``boundscheck=True`` Numba
raises a bare ``IndexError``, which becomes a
:class:`~polypad.errors.BoundsCheckError`.

A parallel loop that holds a check runs serially: Numba does not
parallelize a loop that may raise, and an exception raised from a parallel
region reaches Python as a ``SystemError``.
"""

from __future__ import annotations

import numpy as np

from polypad.errors import BoundsCheckError, PolypadError
from polypad.ir import nodes as ir
from polypad.ir.nodes import Buffer, PrimFunc
from polypad.semantics.interpreter import assumption_error, free_vars
from polypad.semantics.lowering import checked_assumptions
from polypad.semantics.values import convert

from .loop_ranges import kernel_range_error
from .pyexpr import ExprPrinter

#: The first argument of the ``AssertionError`` a failed check raises.
MARKER = "polypad.assume"


def check_lines(stmt: ir.Evaluate, number: int, expr: ExprPrinter) -> list[str]:
    """The two lines (unindented) that check assumption ``stmt``, number ``number``."""
    cond = stmt.value.args[0]
    args = [repr(MARKER), str(number), *(expr(v) for v in free_vars(cond))]
    return [f"if not ({expr(cond)}):", f"    raise AssertionError({', '.join(args)})"]


def kernel_error(func: PrimFunc, error: BaseException, args: list) -> PolypadError | None:
    """The polypad error for what the Numba kernel of lowered ``func`` raised, or None.

    ``args`` are the (checked) arguments of the call; the buffers among them
    hold the state the kernel stopped in.
    """
    if isinstance(error, AssertionError) and error.args[:1] == (MARKER,):
        stmt = checked_assumptions(func)[error.args[1]]
        variables = free_vars(stmt.value.args[0])
        env = {v: convert(value, v.dtype)
               for v, value in zip(variables, error.args[2:], strict=True)}
        arrays = {p: a for p, a in zip(func.params, args, strict=True)
                  if isinstance(p, Buffer) and isinstance(a, np.ndarray)}
        return assumption_error(func, stmt, env, arrays)
    ranged = kernel_range_error(func, error)
    if ranged is not None:
        return ranged
    if isinstance(error, IndexError):
        return BoundsCheckError(
            f"the kernel of {func.name!r} accessed a buffer outside its shape (Numba "
            f"boundscheck: {error}); the reference executor, codegen.build(f, "
            "target='python'), names the access and the indices")
    return None
