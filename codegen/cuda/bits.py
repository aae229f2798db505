"""Value bit casts for the generated kernels: the bits of a scalar read as another number
type of the same width (``T.reinterpret("float32", x)`` of an int32, as TOPI's
``fast_exp`` builds ``2 ** n`` in a float's exponent bits).

The reference executor and the Numba CPU target spell it ``np.int32(x).view(np.float32)``;
numba.cuda types no ``view`` of a scalar, so the cuda target writes a call of
this module's function for the target type::

    from codegen.cuda import bits as _pp_bits  # value bit casts, version 1
    B[i] = _pp_bits.as_float32(np.int32(A[i] + 1))

On a GPU each is a numba-cuda intrinsic (``numba.cuda.extending.intrinsic``,
as :mod:`.wide`): one LLVM ``bitcast`` of the value, which costs no
instruction.  On Numba's simulator it is numpy's ``view`` of the scalar, the
reference executor's own meaning.  :func:`bitcast_codegen` is the intrinsic's
code, shared with a test that runs it on Numba's CPU target (no GPU needed)
against numpy's ``view``.

:data:`codegen.cuda.module_text.BITS_VERSION` is written into every module that uses them
(this module is imported only by the generated modules, as it makes the intrinsics): bump it
with any change here, so that numba-cuda's on-disk cache, keyed by the module
file, never reuses a kernel compiled with the old code.
"""

from __future__ import annotations

import numpy as np
from numba import config

#: The number types a bit cast may give, by their numpy name.
TARGETS = ("int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32",
           "int64", "uint64", "float64")


def _simulated(target: str):
    dtype = np.dtype(target)

    def cast(value):
        value = np.asarray(value)
        assert value.dtype.itemsize == dtype.itemsize, \
            f"a bit cast of a {value.dtype} to {target}: the widths differ"
        return value.view(dtype)[()]
    cast.__name__ = f"as_{target}"
    return cast


def bitcast_typer(target: str):
    """The intrinsic's typing function for ``target`` (``typingctx, value``): the
    signature and :func:`bitcast_codegen`, or None for a value of another width."""
    from numba import types

    result = getattr(types, target)

    def typer(typingctx, value):
        if not isinstance(value, (types.Integer, types.Float)) or \
                value.bitwidth != result.bitwidth:
            return None
        return result(value), bitcast_codegen
    return typer


def bitcast_codegen(context, builder, sig, args):
    """LLVM for a value bit cast: the argument's bits as the result type."""
    return builder.bitcast(args[0], context.get_value_type(sig.return_type))


def _device(target: str):
    from numba.cuda.extending import intrinsic

    typer = bitcast_typer(target)
    typer.__name__ = f"as_{target}"
    return intrinsic(typer)


def _define() -> None:
    for target in TARGETS:
        globals()[f"as_{target}"] = (_simulated(target) if config.ENABLE_CUDASIM
                                     else _device(target))


_define()
