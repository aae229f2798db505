"""Local buffers cut down to each thread's part.

A ``"local"`` buffer is one per thread on a GPU, but the serial program has
one for all: a register tile ``C_local[ty * 4 + ii, tx * 4 + ji]`` that the
schedule allocated for a whole block is indexed by the thread.  Each thread
touches only its part (:mod:`analyses.gpu_sync` refuses a local element two
threads share), so each thread's copy needs only the box of what it touches:
with isl, the elements each thread ``t`` touches,
``{ t -> C_local[e] : some instance on t touches e }``, give per dimension
the first element ``lo(t)`` (``dim_min``, an affine function of the thread's
indices), the stride ``s`` of the elements (``get_range_stride_info``: the
rows ``ty + 8 * i`` of a cyclic tile have stride 8) and the box's size (the
largest ``(dim_max - dim_min) / s + 1``, a constant).  The kernel then
declares ``cuda.local.array`` of the box's size, which the compiler can keep
in registers once every index is a constant (``T.unroll``), and indexes it
with ``(e - lo(t)) // s``, exact since every element is ``lo(t)`` plus a
multiple of ``s``.  A buffer whose box has no constant size keeps its shape.

Each access then gets its index in the box directly, as an expression of
its statement's loop counters (:func:`box_indices`): isl substitutes the
thread's indices by the bound loops' counters they equal and divides by
the stride, so ``C_local[i_2 + 16 * i_1, ...]`` of the thread ``i_2`` reads
``C_local[i_1, ...]`` -- a constant once ``i_1`` is unrolled, with no
division left for Numba to compile.  An access isl cannot write so (more
than one piece) keeps ``(e - lo) // s``.  A buffer some index read from memory
addresses (``L[X[i]]``) keeps its shape: that index may name any element.
"""

from __future__ import annotations

import islpy as isl

from analyses.gpu_threads import coordinates
from polypad.errors import NotAffineError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.model import extract_gathers
from polypad.model.to_ir import pw_aff_to_expr

#: The thread's index on each axis, as variables the boxes' offsets are written in (the
#: kernel assigns them first: ``block_x = cuda.blockIdx.x``).
INDEX_VARS = tuple(n.Var(name, "int32") for name in (
    "block_x", "block_y", "block_z", "thread_x", "thread_y", "thread_z"))


def local_boxes(func: n.PrimFunc) -> dict[n.Buffer, tuple[tuple[int, ...], list]]:
    """For each local buffer of ``func`` that a thread's box makes smaller: the box's
    shape and, per dimension, its first element (an expression of the
    :data:`INDEX_VARS`) and stride."""
    local = [x.buffer for x in walk(func.body)
             if isinstance(x, n.Allocate) and x.buffer.scope == "local"]
    if not local:
        return {}
    model = extract_gathers(func)
    return _boxes(model, local)[0]


def _boxes(model, local) -> tuple[dict, dict]:
    """:func:`local_boxes`, and per buffer its boxes' first elements as isl PwAffs of
    the thread's indices."""
    out, firsts = {}, {}
    for buffer in local:
        name = model.buffer_name(buffer)
        touched = None
        if any(a.gathered for s in model.statements for a in s.accesses if a.buffer is buffer):
            continue  # an index read from memory may name any element: the whole buffer
        for s in model.statements:
            for access in s.accesses:
                if access.buffer is buffer:
                    part = coordinates(s).reverse().apply_range(access.relation)
                    touched = part if touched is None else touched.union(part)
        if touched is None:
            continue
        touched = touched.set_tuple_name(isl.dim_type.out, name).coalesce()
        shape, offsets, lows = [], [], []
        try:
            for d in range(touched.dim(isl.dim_type.out)):
                lo, hi = touched.dim_min(d), touched.dim_max(d)
                stride = touched.get_range_stride_info(d).get_stride().to_python()
                span = hi.sub(lo).max_val()
                if not span.is_int() or stride < 1:
                    raise NotAffineError("no constant size")
                shape.append(span.to_python() // stride + 1)
                lows.append(lo)
                offsets.append((pw_aff_to_expr(lo, INDEX_VARS, model.names), stride))
        except NotAffineError:
            continue  # ISL's error rises: codegen.build answers it (polypad.isl_failure)
        if any(isinstance(e, n.Var) for e in buffer.shape):
            continue
        if tuple(shape) != tuple(buffer.shape):
            out[buffer] = (tuple(shape), offsets)
            firsts[buffer] = lows
    return out, firsts


def local_layout(func: n.PrimFunc, whole: frozenset | set = frozenset()
                 ) -> tuple[dict, dict[int, tuple[n.Expr, ...]]]:
    """:func:`local_boxes` of ``func``, and :func:`box_indices` of their accesses;
    the buffers in ``whole`` keep their shape."""
    local = [x.buffer for x in walk(func.body)
             if isinstance(x, n.Allocate) and x.buffer.scope == "local"
             and x.buffer not in whole]
    if not local:
        return {}, {}
    model = extract_gathers(func)
    boxes, firsts = _boxes(model, local)
    return boxes, box_indices(model, boxes, firsts)


def box_indices(model, boxes: dict, firsts: dict) -> dict[int, tuple[n.Expr, ...]]:
    """For each access (by ``id`` of its ``BufferLoad`` or ``BufferStore``) of a buffer
    cut to a box, its index in the box as expressions of its statement's loop counters,
    where isl writes each as one affine piece."""
    out: dict[int, tuple[n.Expr, ...]] = {}
    for s in model.statements:
        threads = None
        for access in s.accesses:
            box = boxes.get(access.buffer)
            if box is None:
                continue
            try:
                if threads is None:
                    threads = isl.PwMultiAff.from_map(coordinates(s))
                element = isl.PwMultiAff.from_map(access.relation)
                found = []
                for d, (first, (_, stride)) in enumerate(zip(firsts[access.buffer], box[1])):
                    index = element.get_pw_aff(d).sub(first.pullback_pw_multi_aff(threads))
                    index = index.scale_down_val(isl.Val.int_from_si(index.get_ctx(), stride))
                    index = index.intersect_domain(s.domain).coalesce()
                    if index.n_piece() != 1 or not _integral(index):
                        raise NotAffineError("not one integral piece")
                    found.append(pw_aff_to_expr(index, s.loop_vars, model.names))
            except NotAffineError:
                continue  # ISL's error rises: codegen.build answers it
            out[id(access.node)] = tuple(found)
    return out


def _integral(index: isl.PwAff) -> bool:
    pieces = []
    index.foreach_piece(lambda _, aff: pieces.append(aff))
    return pieces[0].get_denominator_val().is_one()

