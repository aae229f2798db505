"""Is a statement a no-op?  (RFC 0077, Enhancement - Remove No Op.)

The review settled three rules; a write is a no-op when

1. it is overwritten before it is read,
2. it goes to memory that is freed before it is read, or
3. it writes the value already there (possibly known only through a
   ``T.assume``).

Rules 1 and 2 are one dataflow question, answered with
:mod:`.dataflow`: no value the statement writes may reach a read outside
it -- neither a later statement (``T.assume`` included: removing a store
must not falsify a fact) nor the caller, who reads every buffer the
function does not allocate (the ``END`` instance); those flows are computed
for the statement's writes alone (:meth:`.Dependences.tagged_flow_out_of`).
Rule 3 is decided by
``analyses.stored_value.stores_existing_value`` for a single store.

>>> is_no_op(f, store)    # Proved("isl", "rule 1: ... overwritten by S2 ...")
"""

from __future__ import annotations

import islpy as isl

from polypad.budget import check as check_deadline
from polypad.errors import NotAffineError, NotFoundError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block
from polypad.ir.opaque import OpaqueSite
from polypad.ir.removal import StatementRemover
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.model.isl_helpers import empty_union_map, empty_union_set, union_sets

from . import instances as inst
from .budgeted import decider
from .canonical import canonical_form, unmodelled
from .dataflow import Dependences
from .evidence import Counterexample, Proved, Refuted, Unknown
from .kept_checks import holds_check, removing_a_check
from .proof_options import ProofOptions
from .stored_value import adds_zero, stores_existing_value


@decider
def is_no_op(f: n.PrimFunc, stmt: n.Stmt | str, *, strict_ieee: bool = False,
             options: ProofOptions | None = None) -> Proved | Refuted | Unknown:
    """Whether removing ``stmt`` (a statement of ``f``, or a block name) changes nothing.

    With ``strict_ieee``, rule 3 compares IEEE floats bit for bit.  ``options``
    are the prover's (:class:`~analyses.proof_options.ProofOptions`), for a
    decider asking on behalf of another.

    ``Proved`` names the rule and the statements that overwrite the values.
    ``Refuted`` means one instance breaks every rule: its value is read later
    (by the instance named second, or by ``END``, the caller) and it changes
    the element (rule 3's values); where the value that instance replaces may come
    from the statement itself, the statement removed and run on concrete inputs
    must also change a buffer (the inputs and both results are in the values).
    ``Unknown`` says which rule could not be
    decided, or that the rules fail at different instances.

    A statement that holds an ``assert`` is never a no-op (it may raise):
    :mod:`.kept_checks` answers for it.
    """
    from polypad.arguments import expect
    expect(stmt, (n.Stmt, str), "stmt", "is_no_op", what="a statement of f or a block name")
    if isinstance(stmt, str):
        stmt = find_block(f, stmt)
    # A decider asking on behalf of another (options given) runs its own comparison
    # of whole programs (analyses.conditional): only a direct question runs one here.
    direct = options is None
    options = ProofOptions.of(strict_ieee, options)
    form = canonical_form(f)
    target = None
    if form is not None:  # a packed function's scaffolding, views or vectors
        target = form.stmt(stmt) if not isinstance(form, OpaqueSite) else None
        if target is None:
            return unmodelled(f, form, stmt)
    if holds_check(stmt):  # an assert may raise: never a no-op
        return removing_a_check(f, stmt)
    if form is not None:
        return form.map_back(is_no_op(f=form.func, stmt=target, options=options))
    try:
        span = inst.leaf_range(f.body, stmt)
    except ValueError as err:
        raise NotFoundError(f"{err}: pass a statement that occurs once in {f.name}") from None
    if span is None:
        raise NotFoundError(f"the statement is not in function {f.name}")
    stores = [node for node in walk(stmt) if isinstance(node, n.BufferStore)]
    zero_tried = not any(isinstance(x, n.Evaluate) for x in walk(stmt))
    if zero_tried:
        # An update that adds 0 (`B[i] = B[i] + F[f] * A[i]` over padding A assumed 0)
        # is rule 3 by one cheap question, asked before the model and the dataflow
        # of rules 1 and 2 are built.
        zero = _adds_zero(f, stores, options)
        if zero is not None:
            return zero
    try:
        model = extract(f)
    except NotAffineError as err:
        return Unknown(f"the function cannot be modelled exactly: {err}")
    inside = model.statements[span[0]:span[1]]
    if any(s.is_assume for s in inside):
        return Unknown("the statement holds a T.assume: removing a fact is not a no-op question")
    if not inside:
        return Proved("isl", "it writes nothing")
    # Only the elements the statement writes can carry its values anywhere: the
    # dataflow of other buffers, and of statements that touch none of these
    # elements, is left out (it does not change these flows).
    writes = [a for s in inside for a in s.accesses if a.kind == "write"]
    written = {id(a.buffer): a.buffer for a in writes}
    elements = empty_union_set()
    for a in writes:
        elements = elements.union(isl.UnionSet.from_set(a.relation.range()))
    deps = Dependences(model, buffers=written.values(), about=elements)
    escaping = _escaping(model, deps, inside)
    if escaping.is_empty():
        return Proved("isl", _why_dead(model, deps, inside))
    rule_3, store = _rule_3_of_each(f, stores, options, zero_tried)
    point = None
    if isinstance(rule_3, Refuted):
        source = next(s for s in inside if s.stmt is store)
        point = _at(escaping, model, source, rule_3.counterexample)
    point = point or inst.first_point(escaping)
    if point is None:
        return Unknown("some value it writes may be read later, but ISL gave no instance of it")
    src, dst, element, params = deps.decode(point)
    params = _params_of_pair(model, point, params)
    sink = point.get_space().unwrap().range().unwrap().get_tuple_name(isl.dim_type.in_)
    if dst.statement == "END":
        read = f"{element} still holds it when {f.name} returns (the caller reads it)"
    elif sink != "END" and model.statement(sink).is_assert:
        read = (f"{element} still holds it where the assert {dst} fails and {f.name} "
                "stops (the caller reads it)")
    else:
        read = f"{dst} reads it"
    seen = f"{src} writes {element} and {read}: rules 1 and 2 fail"
    if isinstance(rule_3, Proved):
        return rule_3
    if isinstance(rule_3, Unknown):
        return Unknown(f"{seen}; {rule_3.reason}")
    cex = rule_3.counterexample
    if point is None:
        # Each instance might still be covered by one rule or the other.
        return Unknown(f"{seen}; rule 3 fails elsewhere ({cex}), not at an instance whose "
                       "value is read")
    why_not = _not_decisive(model, inside, point)
    if why_not == _EARLIER_WRITE and _traced_apart(f, model, inside, point,
                                                   rule_3.counterexample.params):
        why_not = ""
    if why_not:
        ran = _refuted_by_running(f, stmt) if direct else None
        if ran is not None:
            return Refuted(Counterexample(
                f"{seen}; rule 3 fails ({cex.description}), and {ran.description}",
                instances=(src, dst), element=ran.element, params=ran.params,
                values=ran.values))
        return Unknown(f"{seen}; rule 3 fails ({cex}), but {why_not}")
    return Refuted(Counterexample(
        f"{seen}; rule 3 fails: {cex.description}", instances=(src, dst), element=element,
        params={**params, **cex.params}, values=cex.values))


def _refuted_by_running(f: n.PrimFunc, stmt: n.Stmt) -> Counterexample | None:
    """A run of ``f`` with and without ``stmt`` that ends with different buffers.

    Where the rules fail at an instance whose replaced value may itself come from
    an earlier instance (an update in a loop: ``A[0] = A[0] + B[k]``), no single
    instance shows the change, but the whole statement does: the two functions
    run by the reference executor on inputs that honour every assumption
    (:mod:`.execution_refutation`, which tries only where a run is exact), and an
    element left different is a concrete input on which removing it changes the
    result.
    """
    from .execution_refutation import refute_by_execution

    without = _Without(stmt).visit(f)
    if without is f:
        return None
    return refute_by_execution(f, without, "removing the statement")


class _Without(StatementRemover):
    """Deletes one statement (by identity) and whatever that leaves empty."""

    def __init__(self, target: n.Stmt) -> None:
        self.target = target

    def visit(self, node):
        return None if node is self.target else super().visit(node)


def _params_of_pair(model, point: isl.Point, params: dict[str, int]) -> dict[str, int]:
    """``params`` cut to those the domains and accesses of ``point``'s two statements
    involve.

    The flows a question reads are those of the elements it writes, or the whole
    function's when an earlier question computed them: their parameters differ
    (the whole function's hold every parameter, ``n`` of an unrelated loop too),
    and so would the answer's text.  The parameters of the pair are the same either
    way (the fuzz with ``--shuffle``, seed 0, case 1267).
    """
    space = point.get_space().unwrap()
    names = {space.domain().unwrap().get_tuple_name(isl.dim_type.in_),
             space.range().unwrap().get_tuple_name(isl.dim_type.in_)}
    involved: set[str] = set()
    for s in model.statements:
        if s.name not in names:
            continue
        for rel in (s.domain, *(a.relation for a in s.accesses)):
            involved.update(rel.get_dim_name(isl.dim_type.param, k)
                            for k in range(rel.dim(isl.dim_type.param))
                            if rel.involves_dims(isl.dim_type.param, k, 1))
    return {name: value for name, value in params.items() if name in involved}


def _escaping(model, deps: Dependences, inside) -> isl.UnionMap:
    """Flows from a write of ``inside`` to a read outside it (or to ``END``), tagged."""
    return deps.tagged_flow_out_of(s.name for s in inside)


def _at(escaping: isl.UnionMap, model, s, cex: Counterexample) -> isl.Point | None:
    """An escaping flow from the instance of rule 3's counterexample, if any.

    The element is the one that instance writes (the counterexample's own
    element may be a load it read).
    """
    if not cex.instances:
        return None
    indices = cex.instances[0].indices
    names = inst.dim_names(s.space.space)
    if set(indices) != set(names):
        return None
    values = ", ".join(str(indices[name]) for name in names)
    element = ", ".join(f"e{k}" for k in range(s.stmt.buffer.ndim))
    buffer = model.buffer_name(s.stmt.buffer)
    source = isl.UnionSet(f"{{ [{s.name}[{values}] -> {buffer}[{element}]] }}")
    return inst.first_point(escaping.intersect_domain(source))


def _not_decisive(model, inside, point: isl.Point) -> str:
    """Why rule 3 failing at ``point``'s source does not show that removing ``inside``
    changes the result, or ``""``.

    The instance ``X`` that stores a new value changes what the reader sees
    only if everything up to ``X`` runs alike without the statement: no
    element an earlier instance of the statement wrote may be read before
    ``X`` or by ``X``, nor be ``X``'s own element (``D[0] += 1`` then
    ``D[0] += -1`` changes ``D[0]`` at the second instance, yet the two
    together change nothing).  Then, without the statement, the reader sees
    what ``X`` found, and with it what ``X`` stored.  The reader must see
    ``X``'s value for certain: no access of the buffer under a data-dependent
    guard.
    """
    src = point.get_space().unwrap().domain().unwrap()
    buffer = model.buffer(src.get_tuple_name(isl.dim_type.out))
    if any(a.may for s in model.statements for a in s.accesses if a.buffer is buffer):
        return "a data-dependent guard may decide who writes or reads it"
    ours = {s.name: s for s in inside}
    src_name = src.get_tuple_name(isl.dim_type.in_)
    if src_name not in ours:
        return "its instance is not one of the statement's"
    coords, _ = inst.point_coordinates(point)
    n_in = src.dim(isl.dim_type.in_)
    at = isl.Set.universe(ours[src_name].space.space)
    for k in range(n_in):
        at = at.fix_val(isl.dim_type.set, k, isl.Val(str(coords[k])))
    element = isl.Set.universe(inst.buffer_box(model, buffer).get_space())
    for k in range(src.dim(isl.dim_type.out)):
        element = element.fix_val(isl.dim_type.set, k, isl.Val(str(coords[n_in + k])))
    depth = inst.depth_of(model)
    when = inst.statement_time(ours[src_name], depth).intersect_domain(at).range()
    # The times before X, and with X's own: one set each over the whole time space,
    # pulled back to each statement's instances through its time function.
    strictly_before, at_or_before = _times_before(when)
    earlier_writes = empty_union_set()
    reads = isl.UnionSet(element)  # X's own element: what it replaces counts as read
    seen: set[int] = set()  # a long sum reads one element many times, with one relation
    # Each statement costs a few ISL calls over the whole time space (seconds on a
    # 64-deep nest, and a function has as many statements as it likes): the deadline
    # is checked between statements, as value_flow checks it between its steps.
    for s in model.statements:
        check_deadline()
        schedule = inst.statement_time(s, depth)
        up_to = _instances_in(schedule, at_or_before)
        before = None  # the instances strictly before X, for our writes (once per statement)
        for a in s.accesses:
            if a.kind == "read" and id(a.relation) in seen:
                continue
            seen.add(id(a.relation))
            if a.kind == "read":
                reads = reads.union(isl.UnionSet(a.relation.intersect_domain(up_to).range()))
            elif s.name in ours:
                if before is None:
                    before = _instances_in(schedule, strictly_before)
                earlier_writes = earlier_writes.union(
                    isl.UnionSet(a.relation.intersect_domain(before).range()))
    check_deadline()
    if not earlier_writes.intersect(reads).is_empty():
        return _EARLIER_WRITE
    return ""


def _times_before(when: isl.Set) -> tuple[isl.Set, isl.Set]:
    """The times strictly before ``when``, and those at or before it (``when`` a point
    of the time space).

    Written out level by level (equal to ``when`` before level ``k``, below it
    at ``k``): the same sets as ``lex_lt_set``'s and ``lex_le_set``'s domains
    against ``when``, which ISL builds as maps between two whole time spaces,
    four times slower on a 64-deep nest.  The levels' pieces are disjoint (each
    is below ``when`` at a level where the later ones equal it, and ``when``
    is below none), so they are joined without ISL's search for duplicates
    (``union_disjoint``: a tenth of the time of ``union`` at 129 levels).
    Where ``when`` is not a single point (a time that depends on a
    parameter), those domains they are.
    """
    point = when.sample_point()
    if point.is_void() or not isl.Set.from_point(point).is_equal(when):
        universe = isl.Set.universe(when.get_space())
        return universe.lex_lt_set(when).domain(), universe.lex_le_set(when).domain()
    values, _ = inst.point_coordinates(point)
    out = isl.Set.empty(when.get_space())
    prefix = isl.Set.universe(when.get_space())
    for k, value in enumerate(values):
        out = out.union_disjoint(prefix.upper_bound_val(isl.dim_type.set, k, value - 1))
        prefix = prefix.fix_val(isl.dim_type.set, k, value)
    return out, out.union_disjoint(when)


def _instances_in(schedule: isl.Map, times: isl.Set) -> isl.Set:
    """The instances that ``schedule`` (a statement's time function) runs at one of ``times``.

    The preimage of ``times`` under the function: the same set as
    ``schedule.intersect_range(times).domain()``, without eliminating the time
    space's dimensions (a quarter of the time on a 64-deep nest).
    """
    return times.preimage_pw_multi_aff(isl.PwMultiAff.from_map(schedule)).intersect(
        schedule.domain())


_EARLIER_WRITE = ("an earlier instance of the statement wrote an element read up to it, so "
                  "the value it replaces may itself come from the statement")


def _traced_apart(f: n.PrimFunc, model, inside, point: isl.Point, at_params: dict) -> bool:
    """Whether the value ``point``'s source instance replaces depends on no instance of
    ``inside``, by tracing it write by write (:mod:`.traced_values`) with the parameters
    the refutation reports (``at_params`` over ``point``'s): then it is the same without
    the statement, and the reader sees the change."""
    from .program import program_of
    from .traced_values import depends_on_none_of

    src = point.get_space().unwrap().domain().unwrap()
    coords, params = inst.point_coordinates(point)
    n_in = src.dim(isl.dim_type.in_)
    stmt = model.statement(src.get_tuple_name(isl.dim_type.in_)).stmt
    buffer = model.buffer(src.get_tuple_name(isl.dim_type.out))
    element = tuple(coords[n_in:n_in + src.dim(isl.dim_type.out)])
    program = program_of(f)
    return depends_on_none_of(program, [s.stmt for s in inside], buffer, element,
                              program.site_of(stmt), tuple(coords[:n_in]),
                              {**params, **at_params})


def _why_dead(model, deps: Dependences, inside) -> str:
    """Which rule makes ``inside``'s writes dead: the overwriting statements, the freed buffers."""
    names = {s.name for s in inside}
    ours = _universe(s for s in inside)
    output = deps.tagged_output_from(names)
    overwritten = output.zip().intersect_domain(
        isl.UnionMap.from_domain_and_range(ours, _universe(model.statements)).wrap()).zip()
    writers: list[str] = []
    overwritten.range().foreach_set(
        lambda s: writers.append(s.unwrap().get_tuple_name(isl.dim_type.in_)))
    writers = sorted(set(writers), key=lambda w: int(w[1:]))
    outside = [w for w in writers if w not in names]
    written = empty_union_map()
    for s in inside:
        written = written.union(s.writes)
    covered = overwritten.domain()
    left = written.range_map().domain().subtract(covered)  # written, never overwritten
    local = {model.buffer_name(sc.buffer) for sc in inst.allocation_scopes(model.func.body)
             if sc.buffer in model.buffer_names}
    freed: list[str] = []
    left.foreach_set(lambda s: freed.append(s.unwrap().get_tuple_name(isl.dim_type.out)))
    parts = []
    if writers:
        by = ", ".join(_show(model, w) for w in (outside or writers))
        parts.append(f"rule 1: every value it writes is overwritten (by {by}) before any read")
    if freed:
        gone = ", ".join(sorted(set(freed) & local) or sorted(set(freed)))
        parts.append(f"rule 2: what it writes to local buffer {gone} is freed unread")
    return "; ".join(parts) if parts else "nothing it writes is ever read"


def _adds_zero(f: n.PrimFunc, stores: list[n.BufferStore],
               options: ProofOptions) -> Proved | None:
    """Rule 3, proved by the first question only (``stored_value.adds_zero``) for a
    statement holding one update store; ``None`` otherwise."""
    if len(stores) != 1 or options.floats.bit_precise:
        return None
    decision = adds_zero(f, stores[0])
    if decision is None:
        return None
    return Proved(decision.method, _rule_3_detail(decision))


def _rule_3_detail(decision: Proved) -> str:
    detail = "rule 3: it writes the value already there"
    return detail + (f" ({decision.detail})" if decision.detail else "")


def _rule_3_of_each(f: n.PrimFunc, stores: list[n.BufferStore], options: ProofOptions,
                    zero_change_tried: bool) -> tuple[Proved | Refuted | Unknown, n.Stmt | None]:
    """Rule 3 for a statement of one or several stores (a vector store's lanes, an init
    of two buffers), and the store a refutation is about.

    Proved when every store writes the value already there: each leaves memory as it
    found it, so all of them in turn do.  Refuted by the first store (in program order)
    refuted; the caller checks that its value is read.
    """
    if len(stores) == 1:
        return _rule_3(f, stores, options, zero_change_tried=zero_change_tried), stores[0]
    if not stores:
        return _rule_3(f, stores, options), None
    undecided, methods = None, set()
    for store in stores:
        decided = _rule_3(f, [store], options)
        if isinstance(decided, Refuted):
            return decided, store
        if isinstance(decided, Unknown):
            undecided = undecided or decided
        else:
            methods.add(decided.method)
    if undecided is not None:
        return undecided, None
    return Proved("+".join(sorted(methods)),
                  "rule 3: each of its stores writes the value already there"), None


def _rule_3(f: n.PrimFunc, stores: list[n.BufferStore], options: ProofOptions, *,
            zero_change_tried: bool = False) -> Proved | Refuted | Unknown:
    """Rule 3 (a write of the value already there), for a statement holding one store."""
    if len(stores) != 1:
        return Unknown("rule 3 is decided for a single store only")
    # A loop or block around one store runs exactly that store's instances.
    decision = stores_existing_value(f, stores[0], zero_change_tried=zero_change_tried,
                                     options=options)
    if isinstance(decision, Proved):
        return Proved(decision.method, _rule_3_detail(decision))
    if isinstance(decision, Unknown):
        return Unknown(f"rule 3 undecided: {decision.reason}")
    return decision


def _universe(statements) -> isl.UnionSet:
    return union_sets(isl.Set.universe(s.space.space) for s in statements)


def _show(model, name: str) -> str:
    return inst.label(model, model.statement(name))
