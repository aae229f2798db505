"""``Schedule``: primitives that rewrite a function and record a replayable trace."""

from .schedule import Schedule
from .state import primitive
from .trace import Step, Trace

__all__ = ["Schedule", "Step", "Trace", "primitive"]
