"""The record of a schedule: each primitive applied, with arguments that print.

A :class:`Trace` prints as the Python calls that made it, and replays on the
original function (:meth:`Trace.apply_to`) to give the same result.  Arguments
are kept in a printable, re-applicable form: index maps and pad-value
callables as their ``lambda`` text, nodes by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from polypad.errors import NotFoundError


@dataclass(frozen=True)
class Step:
    """One primitive call: its name and its keyword arguments, in order."""

    primitive: str
    args: tuple[tuple[str, object], ...]

    def __str__(self) -> str:
        inside = ", ".join(f"{k}={v!r}" for k, v in self.args)
        return f"sch.{self.primitive}({inside})"

    def apply(self, schedule) -> object:
        """Call this step's primitive on ``schedule``."""
        method = getattr(schedule, self.primitive, None)
        if method is None or not (getattr(method, "is_primitive", False)
                                  or self.primitive == "work_on"):
            raise NotFoundError(
                f"{type(schedule).__name__} has no primitive {self.primitive!r} to replay")
        return method(**dict(self.args))


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
        from .schedule import Schedule

        return Schedule(func_or_mod, preserve_interface=preserve_interface).replay(self)
