"""``Schedule``: primitives that rewrite a function and record a replayable trace.

:data:`PRIMITIVES` is the index of the primitives: each one's argument
checks, legality rule and rewrite (:mod:`.primitives`).
"""

from .primitives import PRIMITIVES, Primitive
from .schedule import Schedule
from .state import primitive
from .trace import Step, Trace

__all__ = ["PRIMITIVES", "Primitive", "Schedule", "Step", "Trace", "primitive"]
