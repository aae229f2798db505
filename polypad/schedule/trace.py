"""The record of a schedule: each primitive applied, with arguments that print.

A :class:`Trace` prints as the Python calls that made it, and replays on the
original function (:meth:`Trace.apply_to`) to give the same result.  Arguments
are kept in a printable, re-applicable form: index maps and pad-value
callables as their ``lambda`` text, nodes by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from polypad.errors import NotFoundError, PolypadError


@dataclass(frozen=True)
class Step:
    """One primitive call: its name and its keyword arguments, in order."""

    primitive: str
    args: tuple[tuple[str, object], ...]

    def __str__(self) -> str:
        positional, keywords = self._split()
        inside = ", ".join([*(repr(v) for v in positional),
                            *(f"{k}={v!r}" for k, v in keywords.items())])
        return f"sch.{self.primitive}({inside})"

    def _split(self) -> tuple[list, dict]:
        """The arguments as (positional, keywords): a ``*name`` argument (a primitive's
        ``*loops``) and those before it go positionally."""
        star = next((k for k, (name, _) in enumerate(self.args) if name.startswith("*")), None)
        if star is None:
            return [], dict(self.args)
        positional = [v for _, v in self.args[:star]] + list(self.args[star][1])
        return positional, dict(self.args[star + 1:])

    def apply(self, schedule) -> object:
        """Call this step's primitive on ``schedule``."""
        method = getattr(schedule, self.primitive, None)
        if method is None or not (getattr(method, "is_primitive", False)
                                  or self.primitive == "work_on"):
            raise NotFoundError(
                f"{type(schedule).__name__} has no primitive {self.primitive!r} to replay")
        positional, keywords = self._split()
        return method(*positional, **keywords)


class Trace:
    """The steps applied so far, in order."""

    def __init__(self, steps=()):
        self.steps: list[Step] = list(steps)

    def append(self, step: Step) -> None:
        self.steps.append(step)

    def __iter__(self):
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index):
        return self.steps[index]

    def __str__(self) -> str:
        return "\n".join(str(step) for step in self.steps)

    def __repr__(self) -> str:
        return f"Trace({self.steps!r})"

    def apply_to(self, func_or_mod, *, preserve_interface: bool = False):
        """A new :class:`~polypad.schedule.Schedule` of ``func_or_mod``, every step replayed."""
        if not _SCHEDULE_CLASS:  # pragma: no cover - polypad.schedule registers it on import
            raise PolypadError("no schedule class is registered; import polypad.schedule")
        schedule = _SCHEDULE_CLASS[0](func_or_mod, preserve_interface=preserve_interface)
        return schedule.replay(self)


# The class apply_to replays on, registered by polypad.schedule.schedule with
# :func:`schedule_class`: importing it here would close an import circle
# (schedule -> state -> trace -> schedule).  Steps find primitives by name on
# the schedule object (Step.apply), so the trace needs no other part of it.
_SCHEDULE_CLASS: list[type] = []


def schedule_class(cls: type) -> type:
    """Class decorator: make ``cls`` the schedule that :meth:`Trace.apply_to` builds."""
    _SCHEDULE_CLASS[:] = [cls]
    return cls
