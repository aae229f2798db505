"""What a code-generation target is, and the registry ``codegen.build`` looks targets up in.

A target turns a *lowered* function (:mod:`polypad.semantics.lowering`) into
something to call.  Everything before that is shared and knows no target:
lowering, the bounds precondition (:mod:`codegen.precondition`), the loops
whose range a kernel must check (:mod:`codegen.loop_ranges`), the
:class:`~codegen.Kernel` that checks a call's arguments and calls what the
target made (:mod:`codegen.calling`), and timing.  A target says:

- :attr:`Target.name`, the name ``codegen.build(f, target=...)`` knows it by;
- :attr:`Target.options`, the keyword options of ``codegen.build`` it takes.
  They are the keyword arguments of its constructor, which checks their
  values and keeps them as fields (Numba's ``fastmath``, ``vector_width``,
  ``boundscheck``); ``codegen.build`` refuses any other option with a
  :class:`~polypad.errors.BuildArgumentError` naming the target and these;
- :attr:`Target.checks_assumptions`, whether it always checks the
  ``T.assume`` statements (then every build of it is lowered with
  :data:`~polypad.semantics.lowering.CHECKED_PIPELINE`);
- :meth:`Target.lowered`, how it lowers: by default :func:`~codegen.lower`;
  the ``cuda`` target, which proves its barriers on the lowered function,
  keeps the top-level assumptions' facts over the parameters there;
- :attr:`Target.guards`, set by ``codegen.build`` before it calls
  :meth:`Target.executable`: the accesses the target's code must check at
  run time (:mod:`codegen.bounds_guards`), those the bounds analysis could
  not prove inside their buffer, or None.  A target that cannot check them
  leaves them unchecked (the reference executor checks every access anyway);
- :meth:`Target.executable`, what it makes of a lowered function: an
  :class:`Executable`, with the source it generated (if any), how to load or
  compile it (lazily, on the first call or :meth:`~codegen.Kernel.compile`),
  whether its code tests the bounds precondition itself, and how to turn
  what its code raises into polypad's errors.

A new target is a module (or a subpackage) defining a subclass, and one
:func:`register` call in ``codegen/__init__.py``; it touches neither the
lowering nor the other targets.  docs/architecture.md ("Targets") shows a
minimal one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from polypad.arguments import got
from polypad.errors import ArgumentTypeError, ArgumentValueError, BuildArgumentError, BuildError
from polypad.ir.nodes import PrimFunc
from polypad.semantics.lowering import lower

from .bounds_guards import BoundsGuards
from .precondition import CallCheck


@dataclass(frozen=True)
class Executable:
    """What a target made of a lowered function.

    ``load`` returns the function to call with a call's checked arguments
    (compiling it, or loading it from a cache); it runs once, on the first
    call or on :meth:`~codegen.Kernel.compile`.  ``source`` is the text the
    target generated, shown as :attr:`codegen.Kernel.source` (None where it
    generates none).  ``tests_precondition`` says that the loaded code tests
    the bounds precondition it was given itself; otherwise the kernel's call
    wrapper tests it before calling.  ``explain(error, args)`` turns what the
    loaded code raised on the checked ``args`` into polypad's error, or None
    to let it through.  ``runnable(loaded)``, when given, says what to call
    in this process at this moment (a serial build in a forked child, a lock
    around a launch).  ``device_arrays`` says that the loaded code also takes
    device arrays (objects with ``__cuda_array_interface__``) for buffers.
    """

    load: Callable[[], Callable[..., None]]
    source: str | None = None
    tests_precondition: bool = False
    explain: Callable[[BaseException, list], Exception | None] | None = None
    runnable: Callable[[Callable[..., None]], Callable[..., None]] | None = None
    device_arrays: bool = False


class Target(ABC):
    """A code-generation target: a name, its options, and what it makes of a lowered
    function (see the module docstring).

    A subclass sets :attr:`name` and :attr:`options`, takes those options as
    keyword arguments of its constructor (checking their values there and
    keeping them as fields), and implements :meth:`executable`.
    """

    #: The name ``codegen.build(f, target=...)`` knows the target by.
    name: ClassVar[str]
    #: The keyword options of ``codegen.build`` the target takes.
    options: ClassVar[tuple[str, ...]] = ()
    #: Whether every build checks the ``T.assume`` statements, as if
    #: ``check_assumptions=True`` had been asked.
    checks_assumptions: ClassVar[bool] = False
    #: The run-time bounds checks of the build (set by ``codegen.build``; see the
    #: module docstring), or None.
    guards: BoundsGuards | None = None

    def lowered(self, func: PrimFunc, *, check_assumptions: bool) -> PrimFunc:
        """``func`` lowered for this target (:func:`polypad.semantics.lowering.lower`,
        checking the assumptions where asked or where the target always does)."""
        return lower(func, check_assumptions=check_assumptions or self.checks_assumptions)

    @abstractmethod
    def executable(self, func: PrimFunc, precondition: CallCheck | None) -> Executable:
        """What to call for lowered ``func``.

        ``precondition`` is the bounds precondition each call must satisfy, or
        None when every call does; the target may test it in its own code (and
        then say so in :attr:`Executable.tests_precondition`), or leave it to
        the kernel's call wrapper.
        """


_registry: dict[str, type[Target]] = {}


def register(target: type[Target]) -> type[Target]:
    """Make ``target`` (a :class:`Target` subclass) buildable under its name; returns it.

    Registering a second class under a name that has one is an error.
    """
    if not (isinstance(target, type) and issubclass(target, Target)):
        raise ArgumentTypeError(f"codegen.register: parameter target takes a Target "
                                f"subclass, not {got(target)}")
    name = getattr(target, "name", None)
    if not isinstance(name, str) or not name:
        raise ArgumentValueError(f"codegen.register: {target.__name__} has no name")
    known = _registry.get(name)
    if known is not None and known is not target:
        raise ArgumentValueError(f"codegen.register: the name {name!r} is taken by "
                                 f"{known.__module__}.{known.__qualname__}")
    _registry[name] = target
    return target


def targets() -> tuple[str, ...]:
    """The names of the registered targets, in the order they were registered."""
    return tuple(_registry)


def configure(name: str, options: dict, where: str = "codegen.build") -> Target:
    """The target ``name`` with ``options`` (the keyword options of a build).

    An unknown name is a :class:`~polypad.errors.BuildError` listing the known
    ones; an option the target does not take is a
    :class:`~polypad.errors.BuildArgumentError` naming the target and the
    options it takes; a value it refuses is whatever its constructor raises.
    """
    target = _registry.get(name)
    if target is None:
        raise BuildError(f"unknown target {name!r}; choose one of {', '.join(_registry)}")
    unknown = [option for option in options if option not in target.options]
    if unknown:
        takes = (f"takes the options {', '.join(target.options)}" if target.options
                 else "takes no options")
        plural = "s" if len(unknown) > 1 else ""
        raise BuildArgumentError(
            f"{where}: the {name!r} target does not take the option{plural} "
            f"{', '.join(unknown)}; it {takes}")
    return target(**options)
