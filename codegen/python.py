"""The ``python`` target: the reference executor, ``codegen.build(f, target="python")``.

It runs the lowered function with :func:`polypad.semantics.interpreter.run`,
which defines what a program means: every ``T.assume`` is checked (the
build always keeps them, :attr:`PythonTarget.checks_assumptions`), every
access and every loop range too.  It generates no source, and its call
wrapper tests the bounds precondition.

Two options of the Numba target are taken too, so that one call can build
every target alike, and they ask nothing the executor does not do already:
``fastmath=None`` or ``False`` (strict IEEE, which is how it computes; any
other mode it cannot honour is refused) and ``boundscheck`` (it checks every
access whatever the value).
"""

from __future__ import annotations

from functools import partial

from polypad.arguments import wrong_type
from polypad.errors import ArgumentValueError, BuildArgumentError
from polypad.ir.nodes import PrimFunc
from polypad.semantics import interpreter

from .precondition import CallCheck
from .target import Executable, Target


class PythonTarget(Target):
    """The reference executor as a target (see the module docstring)."""

    name = "python"
    options = ("fastmath", "boundscheck")
    checks_assumptions = True

    def __init__(self, *, fastmath: bool | str | None = None, boundscheck: bool = False):
        if not (fastmath is None or isinstance(fastmath, (bool, str))):
            raise wrong_type(fastmath, "fastmath", "codegen.build", "None or False",
                             error=BuildArgumentError)
        if fastmath is not None and fastmath is not False:
            raise ArgumentValueError(
                "codegen.build: the 'python' target computes in strict IEEE, every "
                f"operation rounded; fastmath takes None or False there, not {fastmath!r}")
        self.boundscheck = boundscheck  # every access is checked, whatever it says

    def executable(self, func: PrimFunc, precondition: CallCheck | None) -> Executable:
        return Executable(load=lambda: partial(interpreter.run, func))
