"""The lowering pipeline: what runs between a scheduled function and a kernel.

Both targets execute the *lowered* function, so the reference executor and
the Numba kernel see exactly the same statements.  With
``check_assumptions=True`` (always for the reference executor) the
assumptions stay in the lowered function as ``Evaluate(T.assume(c))``, which
both targets execute as a check (see :mod:`.checks`); only those that
mention ``T.undef()`` go, since they cannot be checked.
"""

from __future__ import annotations

from polypad.errors import BuildError
from polypad.ir.nodes import PrimFunc
from polypad.ir.verify import verify
from polypad.transform import remove_assume, remove_store_undef
from polypad.transform.remove_assume import remove_uncheckable_assume

#: Run in order.  ``remove_assume`` first: an undef inside an assumption
#: would otherwise be reported by ``remove_store_undef`` as left over.
PIPELINE = (
    remove_assume,
    remove_store_undef,
)

#: :data:`PIPELINE` for a build that checks assumptions at run time.
CHECKED_PIPELINE = (
    remove_uncheckable_assume,
    remove_store_undef,
)


def lower(func: PrimFunc, *, check_assumptions: bool = False) -> PrimFunc:
    """``func`` verified and run through :data:`PIPELINE` (or :data:`CHECKED_PIPELINE`).

    Raises :class:`~polypad.errors.VerifyError` for ill-formed input and
    :class:`BuildError` for anything the targets cannot execute.
    """
    if not isinstance(func, PrimFunc):
        raise BuildError(f"codegen builds a PrimFunc, not {type(func).__name__}; "
                         "pick one function out of an IRModule with module['name']")
    verify(func)
    for lowering_pass in CHECKED_PIPELINE if check_assumptions else PIPELINE:
        func = lowering_pass(func)
    return func
