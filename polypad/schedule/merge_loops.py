"""The rewrite behind ``merge_adjacent_loops``: a loop's body appended to the loop before.

::

    for i in T.serial(16):            for i in T.serial(16):
        A[i] = 0.0              ->        A[i] = 0.0
    for i in T.serial(16):                if i > 0:
        if i > 0:                             A[i] = A[i - 1] + 1.0
            A[i] = A[i - 1] + 1.0

The second loop's variable becomes the first's, shifted when their minimums
differ.  Whether the merge keeps every dependence is
:func:`.legality.check_merge`'s question.
"""

from __future__ import annotations

from polypad.ir import nodes as n
from polypad.ir.locate import replace
from polypad.ir.ranges import dtype_range
from polypad.ir.stages import seq
from polypad.ir.substitute import substitute


def merge_adjacent(func: n.PrimFunc, around: n.SeqStmt, k: int) -> n.PrimFunc:
    """``func`` with the loop ``around.stmts[k + 1]`` merged into ``around.stmts[k]``."""
    a, b = around.stmts[k], around.stmts[k + 1]
    merged = n.For(a.var, a.min, a.extent, a.kind, seq(a.body, _rebase(a, b)),
                   span=a.span)
    rest = (*around.stmts[:k], merged, *around.stmts[k + 2:])
    new_seq = rest[0] if len(rest) == 1 else n.SeqStmt(rest, span=around.span)
    return replace(func, around, new_seq)


def _rebase(a: n.For, b: n.For) -> n.Stmt:
    """``b``'s body with ``b``'s variable written in terms of ``a``'s."""
    if a.var.dtype != b.var.dtype:
        return substitute(b.body, {b.var: _across_dtypes(a, b)})
    lo, hi = dtype_range(a.var.dtype)
    if a.min == b.min:
        value = a.var
    elif (isinstance(a.min, n.IntImm) and isinstance(b.min, n.IntImm)
          and lo <= b.min.value - a.min.value <= hi and lo < a.min.value - b.min.value <= hi):
        shift = b.min.value - a.min.value
        value = a.var + shift if shift > 0 else a.var - (-shift)
    else:
        # i - a.min lies in [0, extent) and adds up to b's counter: no step wraps, even
        # where the shift itself leaves the dtype (-2**31 to 2**31 - 648).
        value = a.var - a.min + b.min
    return substitute(b.body, {b.var: value})



def _across_dtypes(a: n.For, b: n.For) -> n.Expr:
    """``b``'s counter, of another width than ``a``'s (an ``int64`` loop beside an
    ``int32`` one), in ``b``'s dtype: ``T.Cast(b, i - a.min) + b.min``.

    The value replaces ``b``'s variable wherever it stood, so it must have its
    dtype (``i`` itself in an ``int64`` index left ``j + T.int64(8)`` adding an
    ``int32`` to an ``int64``).  ``i - a.min`` lies in ``[0, extent)``, which the
    extents, equal and each of its own dtype, keep inside both; adding ``b.min``
    gives ``b``'s own counter, so no step wraps.
    """
    distance = a.var if _is_zero(a.min) else a.var - a.min
    value = n.Cast(b.var.dtype, distance)
    return value if _is_zero(b.min) else value + b.min


def _is_zero(e: n.Expr) -> bool:
    return isinstance(e, n.IntImm) and e.value == 0
