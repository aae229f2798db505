"""Value ranges of integer expressions: :mod:`polypad.ir.ranges`, under the name the
model's users have imported them by (``polypad.model.ranges``)."""

from polypad.ir.ranges import (
    Range,
    Ranges,
    dtype_range,
    fits,
    may_wrap,
    value_range,
    wrap,
    wrapping_operations,
)

__all__ = ["Range", "Ranges", "dtype_range", "fits", "may_wrap", "value_range", "wrap",
           "wrapping_operations"]
