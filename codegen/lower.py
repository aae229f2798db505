"""The lowering pipeline: what runs between a scheduled function and a kernel.

Both targets execute the *lowered* function, so the reference executor and
the Numba kernel see exactly the same statements.  With
``check_assumptions=True`` (always for the reference executor) the
assumptions stay in the lowered function as ``Evaluate(T.assume(c))``, which
both targets execute as a check (see :mod:`.checks`); only those that
mention ``T.undef()`` go, since they cannot be checked.
"""

from __future__ import annotations

from polypad.arguments import got
from polypad.errors import BuildArgumentError, BuildError
from polypad.ir.nodes import PrimFunc
from polypad.ir.opaque import first_opaque
from polypad.ir.verify import verify
from polypad.transform import remove_assume, remove_store_undef
from polypad.transform.remove_assume import remove_uncheckable_assume

from .lower_vectors import lower_vectors
from .lower_views import lower_views

#: Run in order.  ``remove_assume`` first: an undef inside an assumption
#: would otherwise be reported by ``remove_store_undef`` as left over.  Views
#: before vectors: a vector store then knows which loads read its own memory.
PIPELINE = (
    remove_assume,
    remove_store_undef,
    lower_views,
    lower_vectors,
)

#: :data:`PIPELINE` for a build that checks assumptions at run time.
CHECKED_PIPELINE = (
    remove_uncheckable_assume,
    remove_store_undef,
    lower_views,
    lower_vectors,
)


def lower(func: PrimFunc, *, check_assumptions: bool = False) -> PrimFunc:
    """``func`` verified and run through :data:`PIPELINE` (or :data:`CHECKED_PIPELINE`).

    Raises :class:`~polypad.errors.VerifyError` for ill-formed input and
    :class:`BuildError` for anything the targets cannot execute: an opaque
    TVM intrinsic, ``T.attr``, ``assert`` or ``return`` is refused by name and
    line (:func:`polypad.ir.opaque.first_opaque`).
    """
    require_prim_func(func, "codegen.lower")
    verify(func)
    opaque = first_opaque(func)
    if opaque is not None:  # a packed function's scaffolding, an extern call ...
        raise BuildError(f"cannot build {func.name!r}: {opaque}")
    for lowering_pass in CHECKED_PIPELINE if check_assumptions else PIPELINE:
        func = lowering_pass(func)
    return func


def require_prim_func(func, where: str) -> None:
    """``func`` must be a PrimFunc: a BuildArgumentError naming ``where`` otherwise."""
    if not isinstance(func, PrimFunc):
        raise BuildArgumentError(
            f"{where}: codegen builds a PrimFunc, not {got(func)} (parameter func); "
            "pick one function out of an IRModule with module['name']")
