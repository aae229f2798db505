"""``pp.Schedule``: primitives that rewrite a function and record a replayable trace.

>>> sch = pp.Schedule(f)
>>> sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0.0)
>>> sch.sequential_buffer_access("compute", "A")
>>> sch.func          # the rewritten PrimFunc
>>> print(sch.trace)  # the calls that made it; sch.trace.apply_to(f) replays them

Each family of primitives is a class of its own module (``tiling_primitives``,
``kind_primitives``, ...), which imports only the state, the checks and the
rewrites, never this class; this class only puts the families together.
:data:`polypad.schedule.PRIMITIVES` indexes every primitive: its argument
checks, its legality rule and its rewrite.
"""

from __future__ import annotations

from .gpu_primitives import GpuPrimitives
from .kind_primitives import KindPrimitives
from .layout_primitives import LayoutPrimitives
from .location_primitives import LocationPrimitives
from .loop_primitives import LoopPrimitives
from .merge_primitives import MergePrimitives
from .overcompute_primitives import OvercomputePrimitives
from .state import ScheduleState
from .tiling_primitives import TilingPrimitives
from .trace import schedule_class


@schedule_class
class Schedule(GpuPrimitives, KindPrimitives, LayoutPrimitives, LocationPrimitives,
               LoopPrimitives, MergePrimitives, OvercomputePrimitives, TilingPrimitives,
               ScheduleState):
    """A function being scheduled; see the module docstring."""

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the function and the trace as a table.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import schedule_html

        return schedule_html(self)
