"""A wider TVM 0.27 corpus: what users bring beyond ``tests/tvm_corpus.py``.

The first corpus (issue 22's measure, kept at its 60 functions) covers the
common operators and primitives.  This one adds, made with the installed TVM
as well (never hand-typed):

- ``te``: more TOPI operators: pooling with padding and strides, log_softmax,
  argmin and the other tuple reductions, conv2d NCHW/NHWC with stride,
  dilation and asymmetric padding, grouped and depthwise convolutions,
  conv2d_transpose, min/prod reductions, casts, gather, split, where, clip,
  strided_slice, resize;
- ``schedule``: primitives the first corpus lacks or uses once: cache_read
  and cache_write moved by compute_at/reverse_compute_at, rfactor on other
  reductions, decompose_reduction inside a tile, blockize, storage_align,
  set_scope, transform_layout with a pad value on an output, reindex, and
  loops bound to ``blockIdx``/``threadIdx`` after a split (the GPU-style
  ``T.thread_binding`` text);
- ``lowered``: the CPU lowering of several of these.

:func:`wide_corpus` returns ``(name, family, text)`` triples, made once per
session; :func:`wide_peer` TVM's own llvm build of a function (or, where
TVM cannot build it for a CPU, of the TE function computing the same
values); :data:`GPU` names the thread-bound functions.
"""

from __future__ import annotations

import functools

from tvm_corpus import _lower


def _te():
    from tvm import te, topi

    def mk(*tensors):
        return te.create_prim_func(list(tensors))

    out = {}
    data = te.placeholder((1, 4, 9, 9), name="data")
    out["max_pool2d_pad_stride"] = mk(data, topi.nn.pool2d(
        data, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max"))
    out["avg_pool2d_pad_exclusive"] = mk(data, topi.nn.pool2d(
        data, (3, 3), (2, 2), (1, 1), (1, 0, 1, 0), "avg", count_include_pad=False))
    out["global_avg_pool"] = mk(data, topi.nn.global_pool(data, "avg"))
    x = te.placeholder((4, 10), name="x")
    out["log_softmax"] = mk(x, topi.nn.log_softmax(x, axis=1))
    out["argmin"] = mk(x, topi.argmin(x, axis=1))
    out["argmax_keepdims"] = mk(x, topi.argmax(x, axis=0, keepdims=True))
    out["min_rows"] = mk(x, topi.min(x, axis=1))
    out["prod_cols"] = mk(x, topi.prod(x, axis=0))
    out["max_keepdims"] = mk(x, topi.max(x, axis=1, keepdims=True))

    kernel = te.placeholder((6, 4, 3, 3), name="kernel")
    out["conv2d_stride_dilation"] = mk(data, kernel, topi.nn.conv2d_nchw(
        data, kernel, (2, 2), (1, 2, 1, 0), (2, 1)))
    nhwc = te.placeholder((1, 9, 9, 4), name="data")
    hwio = te.placeholder((3, 3, 4, 6), name="kernel")
    out["conv2d_nhwc_stride"] = mk(nhwc, hwio, topi.nn.conv2d_nhwc(nhwc, hwio, 2, 1, 1))
    grouped = te.placeholder((6, 2, 3, 3), name="kernel")
    out["group_conv2d"] = mk(data, grouped, topi.nn.group_conv2d_nchw(
        data, grouped, 1, 1, 1, 2))
    dw = te.placeholder((4, 1, 3, 3), name="kernel")
    out["depthwise_stride_dilation"] = mk(data, dw, topi.nn.depthwise_conv2d_nchw(
        data, dw, 2, 2, 2))
    small = te.placeholder((1, 4, 5, 5), name="data")
    tw = te.placeholder((4, 3, 3, 3), name="kernel")
    out["conv2d_transpose"] = mk(small, tw, topi.nn.conv2d_transpose_nchw(
        small, tw, (2, 2), (1, 1), "float32", (1, 1)))

    a = te.placeholder((6, 8), name="a")
    b = te.placeholder((6, 8), name="b")
    out["cast_mixed"] = mk(a, topi.cast(topi.multiply(topi.cast(a, "float16"), 2.0), "int32"))
    ints = te.placeholder((6, 8), name="ints", dtype="int32")
    out["add_int_float_cast"] = mk(a, ints, topi.add(a, topi.cast(ints, "float32")))
    out["where_select"] = mk(a, b, topi.where(topi.greater(a, b), a, topi.negative(b)))
    out["clip_exp"] = mk(a, topi.exp(topi.clip(a, -0.5, 0.5)))
    row = te.placeholder((8,), name="row")
    out["broadcast_sub_div"] = mk(a, row, topi.divide(topi.subtract(a, row), 3.0))
    gidx = te.placeholder((6, 3), name="idx", dtype="int32")
    out["gather"] = mk(a, gidx, topi.gather(a, 1, gidx))
    tidx = te.placeholder((2, 2), name="idx", dtype="int64")
    out["take_2d_wrap"] = mk(a, tidx, topi.take(a, tidx, axis=0, mode="wrap"))
    parts = topi.split(a, [3, 5], axis=1)
    out["split"] = mk(a, *parts)
    c = te.placeholder((6, 2), name="c")
    out["concatenate_axis1"] = mk(a, c, topi.concatenate((a, c), axis=1))
    out["strided_slice"] = mk(a, topi.strided_slice(a, [1, 0], [6, 8], [2, 3]))
    out["reshape_transpose"] = mk(a, topi.transpose(topi.reshape(a, (4, 12)), (1, 0)))
    out["pad_edge"] = mk(a, topi.nn.pad(a, (1, 0), (0, 2)))
    img = te.placeholder((1, 2, 4, 4), name="img")
    out["resize_nearest"] = mk(img, topi.image.resize2d(
        img, (0.0, 0.0, 0.0, 0.0), (8, 8), "NCHW", "nearest_neighbor",
        "asymmetric", rounding_method="floor"))
    out["resize_linear"] = mk(img, topi.image.resize2d(
        img, (0.0, 0.0, 0.0, 0.0), (6, 6), "NCHW", "linear", "align_corners"))
    out["matmul"] = _matmul(8, 16, 12)
    out["gelu_erf"] = mk(a, topi.multiply(a, topi.add(topi.erf(topi.multiply(a, 0.7071)), 1.0)))
    out["round_abs_power"] = mk(a, topi.round(topi.power(topi.abs(a), 1.5)))
    out["rsqrt_sigmoid_tanh"] = mk(a, topi.tanh(topi.sigmoid(topi.rsqrt(topi.abs(a) + 1.0))))
    out["uint8_quantize"] = mk(a, topi.cast(topi.clip(a, 0.0, 1.0) * 255.0, "uint8"))
    qd = te.placeholder((1, 4, 6, 6), name="data", dtype="int8")
    qk = te.placeholder((4, 4, 3, 3), name="kernel", dtype="int8")
    out["conv2d_int8"] = mk(qd, qk, topi.nn.conv2d_nchw(qd, qk, 1, 1, 1, out_dtype="int32"))
    out["upsampling"] = mk(small, topi.nn.upsampling(small, 2, 2))
    out["depth_to_space"] = mk(data, topi.nn.depth_to_space(topi.nn.pad(
        data, (0, 0, 0, 0), (0, 0, 1, 1)), 2))
    out["lrn"] = mk(data, topi.nn.lrn(data, 3, 1, 1e-4, 0.75, 2.0))
    out["adaptive_max_pool"] = mk(data, topi.nn.adaptive_pool(data, (3, 3), "max"))
    out["isnan_where"] = mk(a, topi.where(topi.isnan(a), a, topi.exp(a)))
    # Polypad's limits, measured: an int64 extent in a shape (read since), the bit
    # casts of fast_exp (T.reinterpret) and an extern sort (T.call_packed).
    out["tile_repeat"] = mk(a, topi.repeat(topi.tile(a, (1, 2)), 2, 0))
    out["fast_exp"] = mk(a, topi.fast_exp(a))
    # Row reductions for the cross-thread schedules (``_schedules``).
    y = te.placeholder((3, 16), name="x")
    out["sum_cols"] = mk(y, topi.sum(y, axis=1))
    out["argmax_rows"] = mk(y, topi.argmax(y, axis=1))
    w = te.placeholder((2, 32), name="x")
    out["max_wide"] = mk(w, topi.max(w, axis=1))
    out["sum_wide"] = mk(w, topi.sum(w, axis=1))
    out["softmax_rows"] = mk(w, topi.nn.softmax(w, axis=1))
    out["sort"] = mk(x, topi.sort(x, axis=1))
    return out


def _matmul(m: int, n: int, k: int):
    from tvm import te

    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    return te.create_prim_func([A, B, te.compute((m, n), lambda i, j: te.sum(
        A[i, r] * B[r, j], axis=r), name="C")])


def _schedules(te_funcs):
    from tvm import s_tir

    def sch(name):
        return s_tir.Schedule(te_funcs[name])

    out = {}
    s = sch("conv2d_stride_dilation")
    conv = s.get_sblock("conv2d_nchw")
    loops = s.get_loops(conv)
    cached = s.cache_read(conv, 0, "global")
    s.compute_at(cached, loops[2])
    out["conv_cache_read_compute_at"] = s.mod

    out["log_softmax_cache_write"] = _cache_write_reverse(sch("log_softmax"))

    s = sch("min_rows")
    i, k = s.get_loops(s.get_sblock("x_red"))
    _, ki = s.split(k, [None, 5])
    s.rfactor(ki, 1)
    out["min_rfactor"] = s.mod

    s = sch("conv2d_nhwc_stride")
    conv = s.get_sblock("conv2d_nhwc")
    n, h, w, co, rh, rw, rc = s.get_loops(conv)
    ho, hi = s.split(h, [None, 2])
    s.reorder(ho, w, rh, rw, rc, hi, co)
    s.decompose_reduction(conv, rh)
    out["conv_nhwc_decompose_tiled"] = s.mod

    s = sch("where_select")
    i, j = s.get_loops(s.get_sblock("T_where"))
    jo, ji = s.split(j, [None, 4])
    s.blockize(ji)
    out["where_blockize"] = s.mod

    s = sch("group_conv2d")
    pad = s.get_sblock("pad_temp")
    s.storage_align(pad, 0, axis=2, factor=8, offset=1)
    out["group_conv_storage_align"] = s.mod

    s = sch("max_pool2d_pad_stride")
    s.set_scope(s.get_sblock("pad_temp"), 0, "local")
    out["pool_set_scope"] = s.mod

    s = sch("clip_exp")
    blk = s.get_output_blocks(s.get_sblock("root"))[0]
    s.transform_layout(blk, ("write", 0), lambda i, j: [i, j // 5, j % 5], pad_value=0.0)
    out["clip_exp_transform_layout_pad"] = s.mod

    s = sch("prod_cols")
    blk = s.get_sblock("x_red")
    s.reindex(blk, ("read", 0))
    out["prod_reindex"] = s.mod

    s = sch("broadcast_sub_div")
    blk = s.get_output_blocks(s.get_sblock("root"))[0]
    s.compute_inline(s.get_sblock("T_subtract"))
    i, j = s.get_loops(blk)
    fused = s.fuse(i, j)
    bx, tx = s.split(fused, [None, 16])
    s.bind(bx, "blockIdx.x")
    s.bind(tx, "threadIdx.x")
    out["broadcast_bind_threads"] = s.mod

    s = sch("broadcast_sub_div")  # a bound loop with annotations (thread_binding's keyword)
    blk = s.get_output_blocks(s.get_sblock("root"))[0]
    s.compute_inline(s.get_sblock("T_subtract"))
    _, tx = s.split(s.fuse(*s.get_loops(blk)), [None, 16])
    s.bind(tx, "threadIdx.x")
    s.annotate(tx, "pragma_unroll_explicit", 1)
    out["broadcast_bind_annotated"] = s.mod

    s = sch("argmin")
    i, _ = s.get_loops(s.get_sblock("x_red_temp"))
    s.bind(i, "blockIdx.x")
    (i,) = s.get_loops(s.get_sblock("x_red"))
    s.bind(i, "threadIdx.x")
    out["argmin_bind_block"] = s.mod

    s = sch("global_avg_pool")
    loops = s.get_loops(s.get_sblock("adaptive_pool_sum"))
    s.bind(loops[1], "blockIdx.x")
    s.bind(loops[2], "threadIdx.x")
    _, c, _, _ = s.get_loops(s.get_sblock("adaptive_pool_avg"))
    s.bind(c, "threadIdx.x")
    out["global_pool_bind"] = s.mod

    s = sch("min_rows")  # a cross-thread reduction: the reduce loop bound to threads
    i, k = s.get_loops(s.get_sblock("x_red"))
    s.bind(i, "blockIdx.x")
    s.bind(k, "threadIdx.x")
    out["min_cross_thread"] = s.mod

    # Cross-thread reductions of other combiners, lowered below: a sum over 4 threads
    # after a serial part (TVM's in-thread then cross-thread reduction), a max over 32
    # and argmax's two-value reducer over 16 threads.
    s = sch("sum_cols")
    i, k = s.get_loops(s.get_sblock("x_red"))
    _, ki = s.split(k, [None, 4])
    s.bind(i, "blockIdx.x")
    s.bind(ki, "threadIdx.x")
    out["sum_split_cross_thread"] = s.mod

    s = sch("max_wide")
    i, k = s.get_loops(s.get_sblock("x_red"))
    s.bind(i, "blockIdx.x")
    s.bind(k, "threadIdx.x")
    out["max_cross_thread"] = s.mod

    s = sch("sum_wide")  # a group per threadIdx.y, each reducing over threadIdx.x
    i, k = s.get_loops(s.get_sblock("x_red"))
    s.bind(i, "threadIdx.y")
    s.bind(k, "threadIdx.x")
    out["sum_thread_rows"] = s.mod

    # Softmax on one block per row: the max and the sum each a cross-thread reduction,
    # their results and the exponentials in shared memory.
    s = sch("softmax_rows")
    i, k = s.get_loops(s.get_sblock("T_softmax_norm"))
    s.bind(i, "blockIdx.x")
    s.bind(k, "threadIdx.x")
    for name in ("T_softmax_expsum", "T_softmax_exp", "T_softmax_maxelem"):
        blk = s.get_sblock(name)
        s.compute_at(blk, i)
        s.bind(s.get_loops(blk)[-1], "threadIdx.x")
        s.set_scope(blk, 0, "shared")
    out["softmax_cross_thread"] = s.mod

    s = sch("argmax_rows")
    i, k = s.get_loops(s.get_sblock("x_red_temp"))
    s.bind(i, "blockIdx.x")
    s.bind(k, "threadIdx.x")
    out["argmax_cross_thread"] = s.mod

    s = sch("conv2d_stride_dilation")
    pad = s.get_sblock("pad_temp")
    loops = s.get_loops(s.get_sblock("conv2d_nchw"))
    s.compute_at(pad, loops[1])
    s.decompose_padding(pad, loops[1])
    out["conv_decompose_padding"] = s.mod

    s = sch("clip_exp")
    i, j = s.get_loops(s.get_output_blocks(s.get_sblock("root"))[0])
    s.annotate(i, "pragma_auto_unroll_max_step", 16)
    s.unroll(j)
    out["clip_exp_annotate_unroll"] = s.mod

    s = sch("max_pool2d_pad_stride")
    s.compute_inline(s.get_sblock("pad_temp"))
    out["pool_inline_padding"] = s.mod

    s = sch("matmul")  # a split that does not divide: the block under T.where
    i, _, _ = s.get_loops(s.get_sblock("C"))
    s.split(i, [None, 3])
    out["matmul_split_uneven"] = s.mod

    s = sch("matmul")
    s.pad_einsum(s.get_sblock("C"), [16, 16, 16])
    out["matmul_pad_einsum"] = s.mod

    s = sch("matmul")
    s.reindex_cache_read(s.get_sblock("C"), 0, "shared", lambda i, j, k: (i, k))
    out["matmul_reindex_cache_read"] = s.mod

    s = sch("matmul")
    s.transform_block_layout(s.get_sblock("C"), lambda i, j, k: (j, i, k))
    out["matmul_transform_block_layout"] = s.mod

    s = sch("matmul")
    _, j, _ = s.get_loops(s.get_sblock("C"))
    s.loop_partition(j, [None, 5])
    out["matmul_loop_partition"] = s.mod

    s = sch("matmul")
    c = s.get_sblock("C")
    i, _, k = s.get_loops(c)
    s.parallel(i)
    s.unroll(s.split(k, [None, 4])[1])
    s.annotate(c, "meta_schedule.parallel", 16)
    out["matmul_block_annotate"] = s.mod
    return out


def _cache_write_reverse(s):
    """The output block's result through a local cache written back per row."""
    out_block = s.get_output_blocks(s.get_sblock("root"))[0]
    i = s.get_loops(out_block)[0]
    cached = s.cache_write(out_block, 0, "local")
    del cached
    writer = s.get_output_blocks(s.get_sblock("root"))[0]
    s.reverse_compute_at(writer, i)
    return s.mod


def _lowered(te_funcs, scheduled):
    out = {}
    for name in ("max_pool2d_pad_stride", "avg_pool2d_pad_exclusive", "log_softmax",
                 "argmin", "conv2d_transpose", "gather", "split", "resize_linear",
                 "where_select", "strided_slice"):
        out[f"{name}_lowered"] = _lower(te_funcs[name])
    for name in ("conv_cache_read_compute_at", "min_rfactor", "group_conv_storage_align",
                 "clip_exp_transform_layout_pad", "conv_decompose_padding"):
        out[f"{name}_lowered"] = _lower(scheduled[name])
    for name in ("broadcast_bind_threads", "min_cross_thread", "sum_split_cross_thread",
                 "max_cross_thread", "argmax_cross_thread", "sum_thread_rows",
                 "softmax_cross_thread"):
        out[f"{name}_lowered"] = _lower_for_gpu(scheduled[name])
    return out


def _lower_for_gpu(mod):
    """TVM's lowering for a GPU (``target="cuda"``; no GPU needed) up to the flattened
    buffers, before the host and device functions are split: ``T.launch_thread``, and
    for a cross-thread reduction ``T.tvm_thread_allreduce`` under ``T.comm_reducer``."""
    import tvm
    from tvm import s_tir, tirx

    mod = tirx.transform.BindTarget(tvm.target.Target({"kind": "cuda", "arch": "sm_80"}))(mod)
    passes = [
        s_tir.transform.CanonicalizeLoop(), s_tir.transform.LowerCrossThreadReduction(),
        s_tir.transform.LowerInitBlock(), s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(), s_tir.transform.CompactBufferAllocation(),
        s_tir.transform.LowerMatchBuffer(), s_tir.transform.StmtSimplify(),
        s_tir.transform.LowerOpaqueBlock(), tirx.transform.FlattenBuffer(),
        tirx.transform.NarrowDataType(32), tirx.transform.StmtSimplify(),
        tirx.transform.RemoveNoOp(),
    ]
    return tvm.ir.transform.Sequential(passes)(mod)


#: Scheduled functions -> the TE function computing the same values.
ORIGIN = {
    "conv_cache_read_compute_at": "conv2d_stride_dilation",
    "log_softmax_cache_write": "log_softmax", "min_rfactor": "min_rows",
    "conv_nhwc_decompose_tiled": "conv2d_nhwc_stride", "where_blockize": "where_select",
    "group_conv_storage_align": "group_conv2d", "pool_set_scope": "max_pool2d_pad_stride",
    "clip_exp_transform_layout_pad": "clip_exp", "prod_reindex": "prod_cols",
    "broadcast_bind_threads": "broadcast_sub_div", "argmin_bind_block": "argmin",
    "global_pool_bind": "global_avg_pool", "min_cross_thread": "min_rows",
    "conv_decompose_padding": "conv2d_stride_dilation", "clip_exp_annotate_unroll": "clip_exp",
    "pool_inline_padding": "max_pool2d_pad_stride", "matmul_split_uneven": "matmul",
    "matmul_pad_einsum": "matmul", "matmul_reindex_cache_read": "matmul",
    "matmul_transform_block_layout": "matmul", "matmul_loop_partition": "matmul",
    "matmul_block_annotate": "matmul", "sum_split_cross_thread": "sum_cols",
    "max_cross_thread": "max_wide", "argmax_cross_thread": "argmax_rows",
    "broadcast_bind_annotated": "broadcast_sub_div", "sum_thread_rows": "sum_wide",
    "softmax_cross_thread": "softmax_rows",
}

#: The thread-bound functions: they also build for polypad's cuda target.
GPU = ("broadcast_bind_threads", "argmin_bind_block", "global_pool_bind", "min_cross_thread",
       "broadcast_bind_threads_lowered", "min_cross_thread_lowered",
       "sum_split_cross_thread_lowered", "max_cross_thread_lowered",
       "argmax_cross_thread_lowered", "broadcast_bind_annotated", "sum_thread_rows_lowered",
       "softmax_cross_thread", "softmax_cross_thread_lowered", "argmax_cross_thread",
       "sum_split_cross_thread", "max_cross_thread", "sum_thread_rows")

#: The lowered cross-thread reductions (``T.tvm_thread_allreduce``): sum, min, max, argmax,
#: a sum per threadIdx.y over threadIdx.x, and softmax's max then sum.
ALLREDUCE = ("min_cross_thread_lowered", "sum_split_cross_thread_lowered",
             "max_cross_thread_lowered", "argmax_cross_thread_lowered",
             "sum_thread_rows_lowered", "softmax_cross_thread_lowered")

#: Functions polypad reads and prints back but refuses to build, by the construct its
#: BuildError names: a call of TVM's runtime (docs/tvmscript.md, packed functions).
#: fast_exp's bit cast (``T.reinterpret`` of an int32 as float32) runs since.
NOT_BUILT = {"sort": 'T.call_packed("tvm.contrib.sort.sort", ...)'}

#: Functions whose text TVM 0.27 itself does not read back (``from_source``), with what
#: it trips on: only polypad's own round trip is checked for them.
TVM_UNREADABLE = {"argmax_cross_thread_lowered":
                  "`or` and `and` in the lambda of T.comm_reducer"}

#: Round trips TVM's structural equality does not give, with the path TVM names first
#: (none now: an int64 extent of a shape, tile_repeat's, prints as T.int64(12)).
NOT_EQUAL: dict[str, str] = {}


def wide_origin(name: str) -> str:
    """The TE function of this corpus that ``name`` computes the same values as."""
    name = name.removesuffix("_lowered")
    return ORIGIN.get(name, name)


@functools.lru_cache(maxsize=1)
def wide_functions() -> dict:
    """``name -> (family, TVM object)`` for every function of the wide corpus."""
    te_funcs = _te()
    scheduled = _schedules(te_funcs)
    made = {}
    for family, funcs in (("te", te_funcs), ("schedule", scheduled),
                          ("lowered", _lowered(te_funcs, scheduled))):
        made.update({name: (family, f) for name, f in funcs.items()})
    return made


@functools.lru_cache(maxsize=1)
def wide_corpus() -> tuple[tuple[str, str, str], ...]:
    """``(name, family, text)``: TVM 0.27's own printing of each function."""
    return tuple((name, family, f.script()) for name, (family, f) in wide_functions().items())


@functools.cache
def wide_peer(name: str):
    """TVM's llvm build of ``name`` itself, or where TVM cannot build it for a CPU (a
    thread-bound function), of the TE function it computes the same values as."""
    import tvm

    # A thread-bound function TVM builds for its GPU (its lowered form says cuda).
    for candidate in ((wide_origin(name),) if name in GPU else (name, wide_origin(name))):
        func = wide_functions()[candidate][1]
        mod = func if isinstance(func, tvm.IRModule) else tvm.IRModule({"main": func})
        try:
            return tvm.compile(mod, target="llvm")
        except Exception:  # noqa: BLE001, S112 - thread-bound: fall back to the TE function
            continue
    raise RuntimeError(f"TVM builds neither {name} nor its origin for llvm")


if __name__ == "__main__":  # print the corpus, for reading
    for name, family, text in wide_corpus():
        print(f"# ===== {name} ({family})\n{text}")
