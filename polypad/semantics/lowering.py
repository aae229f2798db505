"""The lowering pipeline: what runs between a scheduled function and a kernel.

Every target executes the *lowered* function, so the reference executor and
a compiled kernel see exactly the same statements.  With
``check_assumptions=True`` (always for the reference executor) the
assumptions stay in the lowered function as ``Evaluate(T.assume(c))``, which
every target executes as a check (:func:`checked_assumptions`); only those
that mention ``T.undef()`` go, since they cannot be checked.  With
``keep_parameter_facts=True`` (a target that analyses the lowered function,
:meth:`codegen.target.Target.lowered`) the top-level
assumptions stay as the facts over the parameters they state, which the
target executes as nothing (:func:`remove_assume_keeping_facts`).
"""

from __future__ import annotations

from polypad.arguments import got
from polypad.errors import BuildArgumentError, BuildError
from polypad.ir import nodes as ir
from polypad.ir.intrinsics import is_call
from polypad.ir.nodes import PrimFunc
from polypad.ir.opaque import first_opaque
from polypad.ir.verify import verify
from polypad.ir.visitor import walk
from polypad.isl_failure import answering_isl_failure, raising_isl_failure

from .lower_allreduce import lower_allreduce
from .lower_vectors import lower_vectors
from .lower_views import lower_views
from .remove_assume import remove_assume, remove_assume_keeping_facts, remove_uncheckable_assume
from .remove_store_undef import remove_store_undef

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

#: :data:`PIPELINE` keeping the top-level assumptions' facts over the parameters.
FACTS_PIPELINE = (
    remove_assume_keeping_facts,
    remove_store_undef,
    lower_views,
    lower_vectors,
)


def lower(func: PrimFunc, *, check_assumptions: bool = False,
          keep_parameter_facts: bool = False) -> PrimFunc:
    """``func`` verified and run through :data:`PIPELINE` (or :data:`CHECKED_PIPELINE`,
    or, asked to keep the parameter facts and not to check, :data:`FACTS_PIPELINE`).

    Raises :class:`~polypad.errors.VerifyError` for ill-formed input and
    :class:`BuildError` for anything the targets cannot execute: an opaque
    TVM intrinsic, ``T.attr``, an ``assert`` reading a buffer, pointer or opaque
    call, or ``return`` is refused by name and line
    (:func:`polypad.ir.opaque.first_opaque`), and
    :class:`~polypad.errors.IslFailure` where ISL fails its own consistency
    check in a lowering pass (:mod:`polypad.isl_failure`).  A plain ``assert``
    stays where it is, for every target to check (:mod:`.asserts`); no pass
    drops it.
    """
    require_prim_func(func, "codegen.lower")
    verify(func)
    # TVM's cross-thread reductions first: the one construct first_opaque names (the
    # analyses do not model it) that every target runs, once it is loops and stores.
    func = lower_allreduce(func)
    # A plain assert is part of the program, which every target runs (.asserts).
    opaque = first_opaque(func, checks_as_facts=True)
    if opaque is not None:  # a packed function's scaffolding, an extern call ...
        raise BuildError(f"cannot build {func.name!r}: {opaque}")
    pipeline = (CHECKED_PIPELINE if check_assumptions
                else FACTS_PIPELINE if keep_parameter_facts else PIPELINE)
    return answering_isl_failure(lambda: _run(pipeline, func),
                                 raising_isl_failure(f"codegen.lower of {func.name!r}"))


def _run(pipeline, func: PrimFunc) -> PrimFunc:
    for lowering_pass in pipeline:
        func = lowering_pass(func)
    return func


def require_prim_func(func, where: str) -> None:
    """``func`` must be a PrimFunc: a BuildArgumentError naming ``where`` otherwise."""
    if not isinstance(func, PrimFunc):
        raise BuildArgumentError(
            f"{where}: codegen builds a PrimFunc, not {got(func)} (parameter func); "
            "pick one function out of an IRModule with module['name']")


def is_check(stmt: ir.Stmt) -> bool:
    """Whether ``stmt`` is an assumption lowering kept, to check
    (``Evaluate(T.assume(c))``)."""
    return isinstance(stmt, ir.Evaluate) and is_call(stmt.value, "assume")


def checked_assumptions(func: PrimFunc) -> list[ir.Evaluate]:
    """The assumptions left in lowered ``func``, distinct by identity, in walk order."""
    seen: dict[int, ir.Evaluate] = {}
    for node in walk(func.body):
        if is_check(node):
            seen.setdefault(id(node), node)
    return list(seen.values())


def has_check(stmt: ir.Stmt) -> bool:
    """Whether an assumption check or an assert (both may raise) is under ``stmt``."""
    return any(is_check(node) or isinstance(node, ir.Assert) for node in walk(stmt))
