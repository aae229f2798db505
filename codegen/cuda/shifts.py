"""Shifts whose amount may lie outside ``[0, bits)``, as device functions of the module.

A shift has numpy's meaning (docs/semantics.md): by an amount outside ``[0, bits)``
a left shift and an unsigned right shift give 0, a signed right shift the sign
(``-1`` or ``0``).  LLVM leaves such a shift undefined, so the amount is tested
where it runs, and the shifted value and the amount are each used twice.  An
expression printed in place would print each operand twice, and a shift of a
shift four times: the source doubled with each level of nesting.  The kernel
calls one small device function per operation and dtype instead, which takes
each operand once (``_pp_shift_right_int32(A[tx], S[tx])``); the generated
module defines the ones it calls, so their text is part of numba-cuda's cache key.
On Numba's simulator each is plain Python, the same code.
"""

from __future__ import annotations

from polypad.ir import dtypes

_SYMBOLS = {"shift_left": "<<", "shift_right": ">>"}


def helper_name(op: str, dtype: str) -> str:
    """``_pp_shift_right_int32`` for ``T.shift_right`` of int32."""
    return f"_pp_{op}_{dtype}"


def helper_source(op: str, dtype: str, cast: str) -> str:
    """The device function for ``op`` (``"shift_left"`` or ``"shift_right"``) of
    ``dtype``; ``cast`` is the dtype's constructor (``np.int32``), since Numba shifts
    in 64 bits."""
    bits = dtypes.bits(dtype)
    outside = f"{cast}(0)"  # both returns of the dtype: Numba unifies them
    if op == "shift_right" and dtype[0] != "u":
        outside = f"{cast}(-1 if value < 0 else 0)"
    return "\n".join(["@cuda.jit(device=True)",
                      f"def {helper_name(op, dtype)}(value, amount):",
                      f"    if 0 <= amount < {bits}:",
                      f"        return {cast}(value {_SYMBOLS[op]} amount)",
                      f"    return {outside}"])


__all__ = ["helper_name", "helper_source"]
