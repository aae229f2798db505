"""The legality rule of ``bind``: a GPU binding must not race.

Binding a loop to a GPU axis claims that its iterations may run on different
threads (or blocks) at once.  The claim holds when the function with the
binding runs on a GPU as it runs serially: the kernels are well formed
(:func:`analyses.gpu_threads.structure`) and every two instances that touch
one element, one writing, are ordered as in the serial program, by one
thread's program order or by a barrier the ``cuda`` target inserts
(:func:`analyses.gpu_sync.plan_barriers`), with the zero fill of shared
memory the target adds (:mod:`polypad.transform.shared_zero_fill`).  A refusal is an
:class:`~polypad.errors.IllegalTransformError` whose ``evidence`` names both
instances, both threads (block and thread indices) and the element.
"""

from __future__ import annotations

import islpy as isl

from analyses import instances as inst
from analyses.evidence import Counterexample
from polypad.errors import BuildError, IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.opaque import check_text, first_check
from polypad.ir.views import root
from polypad.ir.visitor import walk
from polypad.transform.shared_zero_fill import with_zero_fill


def check_bind(bound: n.PrimFunc, node: n.For, name: str, axis: str) -> None:
    """Refuse the function ``bound`` (with ``node``, named ``name``, bound to ``axis``)
    where its kernels cannot run or race."""
    if node.kind not in (n.ForKind.SERIAL, n.ForKind.UNROLL) and node.kind.value != axis:
        raise IllegalTransformError(f"bind of loop {name!r} to {axis}: the loop is "
                                    f"{node.kind.value} already")
    check = first_check(node)
    if check is not None:
        # As parallel refuses it (analyses.assert_order): the threads would run the checks
        # and the stores around them in no order, and no kernel runs an assert.
        text = check_text(check)
        raise IllegalTransformError(
            f"bind of loop {name!r} to {axis}: the loop holds {text}, which would run in "
            "every thread in no order (no store moves across an assert), and the cuda "
            "target runs no assert inside a kernel",
            Counterexample(f"{text} runs in each iteration of the loop over {name}"))
    check_gpu(bound, f"bind of loop {name!r} to {axis}")


def check_set_scope(func: n.PrimFunc, changed: n.PrimFunc, buffer: n.Buffer,
                    scope: str) -> None:
    """``set_scope``: the buffer must be one the function allocates (a parameter's
    memory is the caller's), and the function with the new scope must not race."""
    if buffer in func.params:
        raise IllegalTransformError(f"set_scope of {buffer.name} to {scope!r}: it is a "
                                    "parameter of the function, in the caller's memory; "
                                    "cache_read or cache_write it into a copy of that scope")
    if any(isinstance(x, n.For) and x.kind.value in _AXES for x in walk(changed.body)):
        check_gpu(changed, f"set_scope of {buffer.name} to {scope!r}")


def check_tree_reduce(func: n.PrimFunc, changed: n.PrimFunc, partial: n.Buffer,
                      tree: n.SeqStmt, name: str) -> None:
    """``tree_reduce``: the tree (``tree``, its steps then its last fold) overwrites the
    partial results, so they must be a buffer the function allocates, and nothing
    outside the tree may read a value a step wrote (decided with the exact flow of
    :mod:`analyses.dataflow`)."""
    import analyses

    where = f"tree_reduce of loop {name!r}"
    if partial in func.params:
        raise IllegalTransformError(f"{where}: the partial results {partial.name} are a "
                                    "parameter, which the tree would overwrite")
    ours = {id(x) for x in walk(tree) if isinstance(x, n.BufferStore)}
    deps = analyses.dependences(changed)
    model = deps.model
    steps = [s.name for s in model.statements
             if id(s.stmt) in ours and root(s.stmt.buffer) is partial]
    found: list = []
    deps.tagged_flow_out_of(steps).foreach_map(found.append)
    for part in found:
        sink = part.get_space().range().unwrap().get_tuple_name(isl.dim_type.in_)
        if sink == "END" or id(model.statement(sink).stmt) in ours:
            continue
        src, dst, element, params = deps.decode(inst.first_point(isl.UnionMap.from_map(part)))
        cex = Counterexample(f"{dst} reads {element}, which the tree's step {src} wrote over "
                             "the partial result it held", (src, dst), element, params)
        raise IllegalTransformError(f"{where}: the tree overwrites partial results that are "
                                    f"read after it: {cex}", cex)


def check_double_buffer(func: n.PrimFunc, found) -> None:
    """``double_buffer`` of the tile ``found`` (:class:`.double_buffer.Stages`) keeps
    what ``func`` computes: every read of the tile reads what the same step's copy
    wrote (isl, :func:`analyses.gpu_shared_reads.unwritten_shared_reads`: a read that
    may find nothing written there reads the fresh allocation's zero, and with two
    stages would read the step before last's value instead), and nothing in the loop
    but the copy writes a buffer the copy reads (the copy of step ``k + 1`` moves
    before the rest of step ``k``, and the first before the loop)."""
    from analyses.evidence import Counterexample
    from analyses.gpu_shared_reads import unwritten_shared_reads
    from analyses.instances import leaf_range
    from polypad.model import extract

    from .location_legality import refuse_access

    where = found.where
    unfed = unwritten_shared_reads(func).get(found.buffer)
    if unfed is not None:
        read, element = unfed
        text = (f"{read} reads {element}, which no write of the same step feeds; with two "
                "stages it would read the value of the step before last")
        raise IllegalTransformError(f"{where}: {text}",
                                    Counterexample(text, instances=(read,), element=element))
    # The model names a memory's owner: a fill that loads through a view loads the owner.
    sources = {id(root(x.buffer)) for x in walk(found.fill) if isinstance(x, n.BufferLoad)}
    ours = {id(x) for x in walk(found.fill) if isinstance(x, n.BufferStore)}
    model = extract(func)
    first, stop = leaf_range(func.body, found.loop)
    for s in model.statements[first:stop]:
        if id(s.stmt) in ours:
            continue
        for a in s.accesses:
            if a.kind == "write" and id(a.buffer) in sources:
                refuse_access(model, s, a, f"{where}: {{who}} writes {a.buffer.name} in "
                              "the loop, and the copy of the next step, which reads it, "
                              "would run before it")


_AXES = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y",
         "threadIdx.z")


def check_gpu(func: n.PrimFunc, what: str) -> None:
    """Refuse ``func`` (the result of ``what``) where its kernels cannot run or race."""
    from analyses.evidence import Refuted
    from analyses.gpu_sync import plan_barriers
    from polypad.semantics.lower_allreduce import lower_allreduce
    from polypad.transform.cross_thread_atomics import cross_thread_atomics
    from polypad.transform.lower_cross_thread_reduction import lower_cross_thread_reduction
    from polypad.transform.place_gpu_allocations import place_gpu_allocations
    from polypad.transform.unify_thread_bindings import unify_thread_bindings

    try:
        # As the cuda target reads it: TVM's root tiles and cooperative copies, and a
        # block's reduction axis bound to a thread axis as TVM's tree (its combiner proved
        # commutative and associative) or else as atomic updates after its init.
        func = lower_cross_thread_reduction(unify_thread_bindings(place_gpu_allocations(func)))
        func = cross_thread_atomics(lower_allreduce(func))
        found = plan_barriers(func)
        if not isinstance(found, Refuted):
            # What the cuda target builds: shared memory zero-filled where a read may
            # find nothing written, with the fill's own barriers.
            filled, buffers = with_zero_fill(func)
            if buffers:
                found = plan_barriers(filled)
    except BuildError as error:
        raise IllegalTransformError(f"{what}: {error}") from error
    if isinstance(found, Refuted):
        cex = found.counterexample
        raise IllegalTransformError(f"{what} would race: {cex}", cex)
