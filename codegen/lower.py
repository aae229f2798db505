"""The lowering pipeline: what runs between a scheduled function and a kernel.

Both targets execute the *lowered* function, so the reference executor and
the Numba kernel see exactly the same statements.
"""

from __future__ import annotations

from polypad.errors import BuildError
from polypad.ir.nodes import PrimFunc
from polypad.ir.verify import verify
from polypad.transform import remove_assume, remove_store_undef

#: Run in order.  ``remove_assume`` first: an undef inside an assumption
#: would otherwise be reported by ``remove_store_undef`` as left over.
PIPELINE = (
    remove_assume,
    remove_store_undef,
)


def lower(func: PrimFunc) -> PrimFunc:
    """``func`` verified and run through :data:`PIPELINE`.

    Raises :class:`~polypad.errors.VerifyError` for ill-formed input and
    :class:`BuildError` for anything the targets cannot execute.
    """
    if not isinstance(func, PrimFunc):
        raise BuildError(f"codegen builds a PrimFunc, not {type(func).__name__}; "
                         "pick one function out of an IRModule with module['name']")
    verify(func)
    for lowering_pass in PIPELINE:
        func = lowering_pass(func)
    return func
