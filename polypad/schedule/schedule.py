"""``pp.Schedule``: primitives that rewrite a function and record a replayable trace.

>>> sch = pp.Schedule(f)
>>> sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0.0)
>>> sch.sequential_buffer_access("compute", "A")
>>> sch.func          # the rewritten PrimFunc
>>> print(sch.trace)  # the calls that made it; sch.trace.apply_to(f) replays them

Each family of primitives lives in a mixin of its own module; this class only
puts them together.
"""

from __future__ import annotations

from .layout_primitives import LayoutPrimitives
from .loop_primitives import LoopPrimitives
from .merge_primitives import MergePrimitives
from .overcompute_primitives import OvercomputePrimitives
from .state import ScheduleState


class Schedule(LayoutPrimitives, LoopPrimitives, MergePrimitives, OvercomputePrimitives,
               ScheduleState):
    """A function being scheduled; see the module docstring."""
