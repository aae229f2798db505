"""Values as the programs compute them: numpy scalars of each node's dtype.

float32 arithmetic rounds to float32 after every operation and integers wrap
at their width, as numpy's do; :func:`convert` makes a value one of these, as
a C cast would.  The reference executor computes with them, and a compiled
kernel's arguments take their dtypes from :func:`numpy_dtype`.
"""

from __future__ import annotations

import functools

import numpy as np

from polypad.ir import dtypes


@functools.cache  # the reference executor asks once per value it computes
def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of an IR dtype string."""
    return np.dtype(dtypes.numpy_name(dtype))


def convert(value, dtype: str):
    """``value`` as a numpy scalar of ``dtype``, wrapping like a C cast."""
    target = numpy_dtype(dtype)
    if isinstance(value, np.generic) and value.dtype == target:
        return value  # already one: most results of numpy arithmetic on scalars
    kind = target.kind
    if (isinstance(value, int) and kind in "iu") or (type(value) is float and kind == "f"):
        try:  # a Python number the dtype holds: the scalar type takes it as is
            return target.type(value)
        except OverflowError:
            pass  # wraps like a C cast: the array route below does that
    return np.asarray(value).astype(target)[()]
