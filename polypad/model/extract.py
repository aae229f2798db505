"""``extract(func)``: the polyhedral model of a ``PrimFunc``.

The steps, each in its own module: :mod:`.nest` finds the leaf statements
and their context, :mod:`.domains` builds instance sets, :mod:`.accesses`
the access relations and :mod:`.program_order` the execution order.
"""

from __future__ import annotations

from polypad.concurrency import Recent
from polypad.errors import NotAffineError, UnmodelledError
from polypad.ir import nodes as n
from polypad.ir.deep import deep_entry
from polypad.ir.naming import Names
from polypad.ir.opaque import first_opaque
from polypad.ir.show import show
from polypad.isl_failure import raising_isl_failures

from .accesses import statement_accesses
from .affine import AffineSpace
from .domains import statement_domain
from .isl_helpers import union_all
from .model import ASSERT_ORDER, Model, StatementModel
from .nest import collect
from .parameter_facts import function_parameters, parameter_facts
from .program_order import leaf_time

# Models of the functions asked about most recently, keyed by identity (a PrimFunc
# hashes structurally, which costs a walk of the whole tree): a pass asks one
# decider after another about the same function, and a 64-deep nest's model
# costs a tenth of a second.  A model is not changed once built (its names may
# gain the variables later conversions name).
_MODELS = Recent(16)
_GATHER_MODELS = Recent(16)  # extract_gathers's, apart: the two differ on a gather


@deep_entry
def extract(func: n.PrimFunc) -> Model:
    """The model of ``func``: statements with domains and accesses, and the schedule.

    Raises :class:`polypad.errors.NotAffineError` when a buffer index is not
    quasi-affine; non-affine guards and loop bounds are dropped instead (the
    statement's ``may`` flag records it).  A construct it cannot model at all
    (an opaque TVM intrinsic, ``T.attr``...) raises
    :class:`~polypad.errors.UnmodelledError` naming it and its line.  Whether an
    index or a guard may wrap is asked only at the parameter values the
    top-level assumptions before the statement allow (:mod:`.parameter_facts`);
    the domains and relations are not narrowed by them.  The model
    of a function asked about recently is the one built then.

    >>> m = extract(f)
    >>> m.statements[0].domain     # { S0[i, j] : 0 <= i < 4 and 0 <= j < 4 }
    """
    return _recent_or_built(func, gathers=False)


@deep_entry
def extract_gathers(func: n.PrimFunc) -> Model:
    """:func:`extract`, but an index that reads memory (``A[X[i]]``, ``B[X[i]] = v``) is
    over-approximated by its buffer's whole extent on that axis instead of refused:
    the access is ``may``, its relation holds every element it could touch inside
    the buffer, and its ``gathered`` names the loads (:mod:`.accesses`).  For the
    GPU's barrier plan and race check, where more pairs only mean more barriers or
    a refusal; an analysis that needs exact elements uses :func:`extract`.

    >>> extract_gathers(f).statements[0].accesses[1].relation
    ... # { S0[bx, tx] -> A[e0] : 0 <= bx <= 1 and 0 <= tx <= 31 and 0 <= e0 <= 15 }
    """
    return _recent_or_built(func, gathers=True)


def _recent_or_built(func: n.PrimFunc, gathers: bool) -> Model:
    """The model of ``func`` built recently, or a new one.  The two kinds differ only
    where an index reads memory (:func:`extract` refuses it), so one without such an
    access serves as the other: the GPU's checks and the schedule's ask both of each
    function a ``bind`` makes."""
    own, other = (_GATHER_MODELS, _MODELS) if gathers else (_MODELS, _GATHER_MODELS)
    found = own.get((func,))
    if found is None:
        twin = other.get((func,))
        if twin is not None and not any(a.gathered for s in twin.statements
                                        for a in s.accesses):
            found = own.put((func,), twin)
    if found is not None:
        return found
    # A public call: ISL failing in it raises IslFailure (inside another call, that
    # call answers), never islpy's error.
    name = "extract_gathers" if gathers else "extract"
    return raising_isl_failures(name, lambda: own.put((func,), _extract(func, gathers)))


def _extract(func: n.PrimFunc, gathers: bool = False) -> Model:
    # A plain assert is a statement of the model (:mod:`.nest`); one reading memory is not.
    opaque = first_opaque(func, checks_as_facts=True)
    if opaque is not None:
        raise UnmodelledError(f"{func.name!r} cannot be modelled: {opaque}")
    names = Names()
    buffers = Names(reserved=(ASSERT_ORDER,))
    # Parameters and buffers of the signature claim their plain names first.
    for p in func.params:
        if isinstance(p, n.Var):
            names.name(p)
        else:
            buffers.name(p)
            for dim in p.shape:
                if isinstance(dim, n.Var):
                    names.name(dim)
    reread: list = []
    leaves, tree = collect(func.body, reread)
    if reread:
        stmt, expr, store = reread[0]
        what = ("the condition" if isinstance(stmt, n.IfThenElse)
                else f"{stmt.var.name}'s value")
        raise NotAffineError(
            f"{what} {show(expr)} is read once, before the body, but the body's "
            f"store to {store.buffer.name} may change it before a later statement of "
            "the body: the model would read it again there", expr)
    depth = max((len(leaf.loops) for leaf in leaves), default=0)
    statements = []
    # The parameter facts of the top-level assumptions before each leaf: where one
    # fails, no instance of the leaf runs, so a wrap only there is no wrap.
    facts = parameter_facts(leaves, function_parameters(func), names)
    for index, (leaf, known) in enumerate(zip(leaves, facts, strict=True)):
        name = f"S{index}"
        space = AffineSpace(leaf.loop_vars, tuple_name=name, lets=leaf.lets, names=names)
        domain, dropped = statement_domain(leaf, space, known)
        may = bool(dropped)
        accesses = statement_accesses(leaf, name, space, domain, may, buffers, known,
                                      gathers)
        statements.append(StatementModel(
            name=name, stmt=leaf.stmt, loop_vars=leaf.loop_vars, loops=leaf.loops,
            domain=domain, may=may, dropped_guards=dropped,
            guards=tuple(g.holds for g in leaf.guards), accesses=accesses, block=leaf.block,
            lets=leaf.lets, space=space, time=leaf_time(leaf, space, domain, depth),
            position=leaf.position,
        ))
    schedule = union_all(s.time for s in statements)
    return Model(
        func=func, statements=tuple(statements), schedule=schedule,
        params=tuple(_params(func, names)), names=names, buffer_names=buffers, tree=tree,
    )


def _params(func: n.PrimFunc, names: Names) -> list[n.Var]:
    """Scalar parameters first (signature order), then every other variable named as one."""
    out = [p for p in func.params if isinstance(p, n.Var)]
    for obj in names.objects():
        if not any(obj is p for p in out):
            out.append(obj)
    return out
