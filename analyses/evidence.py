"""What deciders answer: ``Proved``, ``Refuted`` with a counterexample, or ``Unknown``.

Every decider in :mod:`analyses` returns one of the three.  Only ``Proved`` is
truthy, so ``if prove(c, ctx):`` reads as "if it is proved"; a caller that
must tell a refusal from a give-up checks the class.  A ``Counterexample``
names the statement instances (loop indices), the buffer element and, where
they matter, the values, so a refusal can explain itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Instance:
    """One execution of a statement: its label and its loop indices."""

    statement: str  # a block name, ISL tuple name or printed statement
    indices: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        inside = ", ".join(f"{k}={v}" for k, v in self.indices.items())
        return f"{self.statement}({inside})"


@dataclass(frozen=True)
class Element:
    """One buffer element."""

    buffer: str
    indices: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.buffer}[{', '.join(map(str, self.indices))}]"


@dataclass(frozen=True)
class Counterexample:
    """Concrete evidence that something does not hold.

    ``instances`` are the statement executions involved (one for a failed
    fact, two for a broken dependence), ``element`` the buffer element they
    meet at, ``params`` the scalar parameters, ``values`` the buffer and
    scalar values that matter (``"A[3, 2]" -> 1.0``), and ``description``
    says in words what goes wrong.  ``func`` is the function the instances
    and the element belong to, attached by the decider's front door
    (:func:`analyses.budgeted.decider`) so that a picture can draw the real
    buffer shapes and statements; it takes no part in equality or ``repr``.
    """

    description: str
    instances: tuple[Instance, ...] = ()
    element: Element | None = None
    params: dict[str, int] = field(default_factory=dict)
    values: dict[str, object] = field(default_factory=dict)
    func: object = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        parts = [self.description]
        if self.instances:
            parts.append("instances: " + ", ".join(map(str, self.instances)))
        if self.element is not None:
            parts.append(f"element: {self.element}")
        if self.params:
            parts.append("params: " + ", ".join(f"{k}={v}" for k, v in self.params.items()))
        if self.values:
            parts.append("values: " + ", ".join(f"{k}={v}" for k, v in self.values.items()))
        return "; ".join(parts)

    def _repr_html_(self) -> str:
        """Jupyter's rich display: a table, and the element on its buffer.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import counterexample_html

        return counterexample_html(self)


@dataclass(frozen=True)
class Proved:
    """The claim holds; ``method`` says how it was decided (``"isl"``, ``"z3"``, ...)."""

    method: str
    detail: str = ""

    def __bool__(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"proved by {self.method}" + (f": {self.detail}" if self.detail else "")

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the verdict and how.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import decision_html

        return decision_html(self)


@dataclass(frozen=True)
class Refuted:
    """The claim fails, and ``counterexample`` shows where."""

    counterexample: Counterexample

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"refuted: {self.counterexample}"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the verdict and the counterexample.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import decision_html

        return decision_html(self)


@dataclass(frozen=True)
class Unknown:
    """The claim could not be decided (a timeout, a non-affine term, ...); ``reason`` says why.

    ``timed_out`` is True when a time limit (the budget, or Z3's timeout) ended
    the attempt: with more time, or on a less busy machine, the answer may
    differ, so such an answer is never remembered as final.
    """

    reason: str
    timed_out: bool = field(default=False, compare=False, repr=False)

    def __bool__(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"unknown: {self.reason}"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the verdict and why.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import decision_html

        return decision_html(self)


Decision = Proved | Refuted | Unknown
