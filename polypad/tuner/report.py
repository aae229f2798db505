"""What a search found and how: :class:`Tuning`, attached to the schedule it returns.

``sch.tuning`` holds every candidate tried, in order, with its status and
time, the best-so-far curve, the counts (how many the primitives refused and
which, how many differed from the reference), and what the candidates were
checked against.  In a notebook it shows as the curve, the counts and the
trace (:mod:`polypad.viz.tuning`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Tried:
    """One candidate tried: its key, status, median seconds (timed ones), and the
    search's elapsed seconds when it was done."""

    key: str
    status: str
    seconds: float | None
    elapsed: float
    from_log: bool = False
    detail: str = ""


@dataclass
class Tuning:
    """A search's record (see the module docstring)."""

    func: str
    func_hash: str
    target: str
    space: int  # candidates in the space
    tried: list[Tried] = field(default_factory=list)
    refused: Counter = field(default_factory=Counter)  # by primitive
    skipped: Counter = field(default_factory=Counter)  # opportunistic steps, by primitive
    checked_against: str = ""
    runner: str = ""
    search_s: float = 0.0
    from_log: bool = False  # the result was read from the log without searching
    exhausted: bool = False
    best_key: str = ""
    best_seconds: float | None = None
    plain_seconds: float | None = None
    trace_text: str = ""
    #: The fastest candidates timed again at the end: key -> the median of all their
    #: calls (:data:`.search.CONFIRM`).
    confirmed: dict[str, float] = field(default_factory=dict)

    @property
    def measured(self) -> int:
        """How many candidates were timed (in this search, not read from the log)."""
        return sum(1 for t in self.tried if t.status == "ok" and not t.from_log)

    @property
    def speedup(self) -> float | None:
        """The plain function's time over the best's."""
        if self.plain_seconds and self.best_seconds:
            return self.plain_seconds / self.best_seconds
        return None

    def curve(self) -> list[tuple[float, float]]:
        """(elapsed seconds, best median so far) after each timed candidate."""
        out: list[tuple[float, float]] = []
        best = None
        for t in self.tried:
            if t.status == "ok" and t.seconds is not None:
                best = t.seconds if best is None else min(best, t.seconds)
                out.append((t.elapsed, best))
        return out

    def summary(self) -> str:
        """A few lines: the best, the counts, the checks."""
        statuses = Counter(t.status for t in self.tried)
        lines = [f"{self.func}: best {self.best_key or 'plain'}"
                 + (f" {seconds_text(self.best_seconds)}" if self.best_seconds else "")
                 + (f", {self.speedup:.3g}x the plain nest" if self.speedup else "")]
        if self.from_log:
            lines.append("read from the tuning log, no search")
        else:
            lines.append(f"{self.measured} timed of {self.space} in the space in "
                         f"{self.search_s:.1f} s ({self.runner}); "
                         + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
        if self.refused:
            lines.append("refused by " + ", ".join(f"{k} {v}" for k, v in
                                                  sorted(self.refused.items())))
        if self.checked_against:
            lines.append(f"results checked against the {self.checked_against}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        from polypad.viz.tuning import tuning_html

        return tuning_html(self)


def seconds_text(seconds: float) -> str:
    """``seconds`` with three significant digits in s, ms or µs."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-6:.3g} µs"
