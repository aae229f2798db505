"""The corpus issue 22 is measured on: functions that TVM 0.27 printed.

polypad's users bring the text TVM prints (``mod.script()``).  This module
makes that text with the real TVM, so the corpus follows what TVM prints
rather than what someone retyped:

- ``te``: TE and TOPI operators through ``te.create_prim_func`` (the block
  dialect, ``T.sblock``);
- ``schedule``: the same after ``tvm.s_tir.Schedule`` primitives;
- ``lowered``: after TVM's CPU lowering passes, up to common subexpression
  elimination (flattened buffers as views, vectors, typed lets);
- ``packed``: after ``MakePackedAPI`` (asserts, ``T.tvm_struct_get``,
  ``T.attr``), which polypad reads but cannot run.

:func:`corpus` returns ``(name, family, text)`` triples, made once per
session (a few seconds).  Without TVM (the ``polypad[tvm]`` extra) it raises
ImportError; tests skip.
"""

from __future__ import annotations

import functools

# Shapes are small: the parsed functions are also run against numpy.
_M, _K, _N = 8, 12, 16


def _te():
    import tvm
    from tvm import te, tirx, topi

    def mk(*tensors):
        return te.create_prim_func(list(tensors))

    out = {}
    A = te.placeholder((_M, _K), name="A")
    B = te.placeholder((_K, _N), name="B")
    k = te.reduce_axis((0, _K), name="k")
    C = te.compute((_M, _N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    out["matmul"] = mk(A, B, C)

    X = te.placeholder((_M, _K), name="X")
    W = te.placeholder((_N, _K), name="W")
    bias = te.placeholder((_N,), name="bias")
    out["dense_bias_relu"] = mk(X, W, bias, topi.nn.relu(topi.add(topi.nn.dense(X, W), bias)))

    BA = te.placeholder((2, 4, 6), name="A")
    BB = te.placeholder((2, 5, 6), name="B")
    out["batch_matmul"] = mk(BA, BB, topi.nn.batch_matmul(BA, BB))

    data = te.placeholder((1, 3, 8, 8), name="data")
    kernel = te.placeholder((4, 3, 3, 3), name="kernel")
    out["conv2d_nchw"] = mk(data, kernel, topi.nn.conv2d_nchw(data, kernel, 1, 1, 1))
    nhwc = te.placeholder((1, 8, 8, 3), name="data")
    hwio = te.placeholder((3, 3, 3, 4), name="kernel")
    out["conv2d_nhwc"] = mk(nhwc, hwio, topi.nn.conv2d_nhwc(nhwc, hwio, 1, 1, 1))
    dw = te.placeholder((3, 1, 3, 3), name="kernel")
    out["depthwise_conv2d"] = mk(data, dw, topi.nn.depthwise_conv2d_nchw(data, dw, 1, 1, 1))
    ncw = te.placeholder((1, 3, 16), name="data")
    k1 = te.placeholder((4, 3, 3), name="kernel")
    out["conv1d"] = mk(ncw, k1, topi.nn.conv1d_ncw(ncw, k1, 1, 1, 1))
    for kind in ("max", "avg"):
        pooled = topi.nn.pool2d(data, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), kind)
        out[f"{kind}_pool2d"] = mk(data, pooled)

    x = te.placeholder((4, 16), name="x")
    out["softmax"] = mk(x, topi.nn.softmax(x, axis=1))
    gamma = te.placeholder((16,), name="gamma")
    beta = te.placeholder((16,), name="beta")
    out["layer_norm"] = mk(x, gamma, beta, topi.nn.layer_norm(x, gamma, beta, axis=[1]))
    out["sum_rows"] = mk(x, topi.sum(x, axis=1))
    out["max_all"] = mk(x, topi.max(x))
    out["transpose"] = mk(x, topi.transpose(x, (1, 0)))
    out["pad"] = mk(x, topi.nn.pad(x, (1, 2), (2, 1), pad_value=0.5))
    y = te.placeholder((3, 16), name="y")
    out["concatenate"] = mk(x, y, topi.concatenate((x, y), axis=0))
    idx = te.placeholder((5,), name="idx", dtype="int32")
    out["take"] = mk(x, idx, topi.take(x, idx, axis=1, mode="clip"))
    out["cumsum"] = mk(x, topi.cumsum(x, axis=1))
    out["argmax"] = mk(x, topi.argmax(x, axis=1))
    out["relu_sigmoid"] = mk(x, topi.sigmoid(topi.nn.relu(x)))

    qa = te.placeholder((_M, _K), name="A", dtype="int8")
    qb = te.placeholder((_N, _K), name="B", dtype="int8")
    out["dense_int8"] = mk(qa, qb, topi.nn.dense(qa, qb, out_dtype="int32"))
    ha = te.placeholder((_M, _K), name="A", dtype="float16")
    hb = te.placeholder((_K, _N), name="B", dtype="float16")
    hk = te.reduce_axis((0, _K), name="k")
    hc = te.compute((_M, _N), lambda i, j: te.sum(
        ha[i, hk].astype("float32") * hb[hk, j].astype("float32"), axis=hk), name="C")
    out["matmul_fp16"] = mk(ha, hb, hc)
    hd = te.placeholder((1, 3, 8, 8), name="data", dtype="float16")
    hw = te.placeholder((4, 3, 3, 3), name="kernel", dtype="float16")
    out["conv2d_fp16"] = mk(hd, hw, topi.nn.conv2d_nchw(hd, hw, 1, 1, 1, out_dtype="float16"))

    n = tirx.Var("n", "int32")
    m = tirx.Var("m", "int32")
    sa = te.placeholder((n, _K), name="A")
    sb = te.placeholder((_K, m), name="B")
    sk = te.reduce_axis((0, _K), name="k")
    out["matmul_symbolic"] = mk(sa, sb, te.compute(
        (n, m), lambda i, j: te.sum(sa[i, sk] * sb[sk, j], axis=sk), name="C"))
    sx = te.placeholder((n, 16), name="x")
    out["softmax_symbolic"] = mk(sx, topi.nn.softmax(sx, axis=1))
    n64 = tirx.Var("n", "int64")  # printed with a module-level n = TypeVar("n")
    w = te.placeholder((n64, 8), name="A")
    out["scale_int64_symbolic"] = mk(w, te.compute((n64, 8), lambda i, j: w[i, j] * 2.0,
                                                   name="B"))
    sv = te.placeholder((n,), name="a")
    sw = te.placeholder((n,), name="b")
    out["add_symbolic"] = mk(sv, sw, topi.add(sv, sw))
    s2 = te.placeholder((n, m), name="A")
    out["scale_2d_symbolic"] = mk(s2, te.compute((n, m), lambda i, j: s2[i, j] * 2.0, name="B"))
    del tvm
    return out


def _schedules(te_funcs):
    import tvm
    from tvm import s_tir

    def sch(name):
        return s_tir.Schedule(te_funcs[name])

    out = {}
    s = sch("matmul")
    i, j, k = s.get_loops(s.get_sblock("C"))
    io, ii = s.split(i, [None, 4])
    s.reorder(io, j, ii, k)
    s.parallel(io)
    out["matmul_split_parallel"] = s.mod

    s = sch("matmul")
    i, j, k = s.get_loops(s.get_sblock("C"))
    jo, ji = s.split(j, [None, 4])
    s.reorder(i, jo, k, ji)
    s.vectorize(ji)
    out["matmul_vectorize"] = s.mod

    s = sch("matmul")
    c = s.get_sblock("C")
    s.cache_read(c, 0, "global")
    s.cache_write(c, 0, "local")
    out["matmul_cache_read_write"] = s.mod

    s = sch("matmul")
    c = s.get_sblock("C")
    i, j, k = s.get_loops(c)
    s.decompose_reduction(c, k)
    out["matmul_decompose_reduction"] = s.mod

    s = sch("matmul")
    c = s.get_sblock("C")
    i, j, k = s.get_loops(c)
    s.unroll(k)
    s.fuse(i, j)
    out["matmul_fuse_unroll"] = s.mod

    s = sch("dense_bias_relu")
    dense, add = s.get_sblock("T_matmul_NT"), s.get_sblock("T_add")
    i, _ = s.get_loops(s.get_sblock("compute"))
    s.compute_at(add, i)
    s.compute_at(dense, i)
    out["dense_compute_at"] = s.mod

    s = sch("dense_bias_relu")
    i, _ = s.get_loops(s.get_sblock("T_matmul_NT"))[:2]
    s.reverse_compute_at(s.get_sblock("T_add"), i)
    out["dense_reverse_compute_at"] = s.mod

    s = sch("matmul")
    s.transform_layout(s.get_sblock("C"), ("read", 0), lambda i, k: [i // 5, k, i % 5],
                       pad_value=0.0)
    out["matmul_transform_layout_pad"] = s.mod

    s = sch("conv2d_nchw")
    conv = s.get_sblock("conv2d_nchw")
    _, ff, yy, xx, rc, ry, rx = s.get_loops(conv)
    yo, yi = s.split(yy, [None, 4])
    s.reorder(ff, yo, rc, ry, rx, yi, xx)
    s.compute_inline(s.get_sblock("pad_temp"))
    out["conv2d_tiled_inline"] = s.mod

    s = sch("softmax")
    i, _ = s.get_loops(s.get_sblock("T_softmax_norm"))
    s.compute_inline(s.get_sblock("T_softmax_exp"))
    s.parallel(i)
    out["softmax_inline_parallel"] = s.mod

    s = sch("sum_rows")
    i, k = s.get_loops(s.get_sblock("x_red"))
    ko, ki = s.split(k, [None, 4])
    s.rfactor(ki, 0)
    out["sum_rfactor"] = s.mod

    s = sch("layer_norm")
    ax0, ax1 = s.get_loops(s.get_sblock("T_layer_norm"))
    s.vectorize(ax1)
    s.parallel(ax0)
    out["layer_norm_vectorize"] = s.mod

    s = sch("matmul_symbolic")
    i, j, k = s.get_loops(s.get_sblock("C"))
    io, ii = s.split(i, [None, 4])
    out["matmul_symbolic_split"] = s.mod

    s = sch("max_pool2d")
    blk = s.get_sblock("pool_max")
    loops = s.get_loops(blk)
    s.parallel(s.fuse(loops[0], loops[1]))
    out["max_pool_fuse_parallel"] = s.mod
    del tvm
    return out


def _lower(mod, *, packed: bool = False):
    """TVM's default CPU pipeline (``tvm.s_tir.pipeline``); ``packed`` runs all of it,
    else it stops after common subexpression elimination, before MakePackedAPI."""
    import tvm
    from tvm import s_tir, tirx

    target = tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu"}, host="llvm")
    if not isinstance(mod, tvm.IRModule):
        mod = tvm.IRModule.from_expr(mod)
    if packed:
        mod = tvm.IRModule({gv: f.with_attr("global_symbol", gv.name_hint)
                            for gv, f in mod.functions.items()})
    mod = tirx.transform.BindTarget(target)(mod)
    if packed:
        pipeline, _, _ = tirx.get_tir_pipeline("s_tir")
        return pipeline(mod)
    passes = [
        s_tir.transform.CanonicalizeLoop(), s_tir.transform.LowerCrossThreadReduction(),
        s_tir.transform.LowerInitBlock(), s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(), s_tir.transform.CompactBufferAllocation(),
        s_tir.transform.LowerMatchBuffer(), s_tir.transform.StmtSimplify(),
        s_tir.transform.LowerOpaqueBlock(), tirx.transform.FlattenBuffer(),
        tirx.transform.NarrowDataType(32), s_tir.transform.LoopPartition(),
        tirx.transform.VectorizeLoop(True), tirx.transform.StorageRewrite(),
        s_tir.transform.HoistIfThenElse(), tirx.transform.UnrollLoop(),
        tirx.transform.StmtSimplify(), tirx.transform.RemoveNoOp(),
        tirx.transform.CommonSubexprElim(),
    ]
    return tvm.ir.transform.Sequential(passes)(mod)


def _vectorized(func, block, *, outer: bool = False):
    """``func`` with the inner loop of ``block`` (or, ``outer``, the outer one moved
    inside) split by 4 and vectorized."""
    from tvm import s_tir

    s = s_tir.Schedule(func)
    i, j = s.get_loops(s.get_sblock(block))
    if outer:
        s.reorder(j, i)
        i, j = j, i
    s.vectorize(s.split(j, [None, 4])[1])
    return s.mod


def _lowered(te_funcs, scheduled):
    out = {}
    # Vectorized with a stride (the store is a slice with a step) and over symbolic
    # extents (a view whose extent is a let variable).
    out["transpose_vectorize_lowered"] = _lower(_vectorized(te_funcs["transpose"],
                                                            "T_transpose", outer=True))
    out["scale_symbolic_vectorize_lowered"] = _lower(_vectorized(
        te_funcs["scale_2d_symbolic"], "B"))
    for name in ("matmul", "conv2d_nchw", "softmax", "layer_norm", "argmax", "pad",
                 "add_symbolic", "take", "cumsum"):
        out[f"{name}_lowered"] = _lower(te_funcs[name])
    for name in ("matmul_vectorize", "matmul_split_parallel", "matmul_transform_layout_pad",
                 "layer_norm_vectorize", "dense_compute_at"):
        out[f"{name}_lowered"] = _lower(scheduled[name])
    return out


def _packed(te_funcs):
    return {f"{name}_packed": _lower(te_funcs[name], packed=True)
            for name in ("relu_sigmoid", "matmul")}


#: Scheduled and lowered functions -> the TE function computing the same thing
#: (each lowered one is also named after what it lowers: ``<that>_lowered``).
ORIGIN = {
    "matmul_split_parallel": "matmul", "matmul_vectorize": "matmul",
    "matmul_cache_read_write": "matmul", "matmul_decompose_reduction": "matmul",
    "matmul_fuse_unroll": "matmul", "dense_compute_at": "dense_bias_relu",
    "dense_reverse_compute_at": "dense_bias_relu", "conv2d_tiled_inline": "conv2d_nchw",
    "softmax_inline_parallel": "softmax", "sum_rfactor": "sum_rows",
    "layer_norm_vectorize": "layer_norm", "matmul_symbolic_split": "matmul_symbolic",
    "max_pool_fuse_parallel": "max_pool2d", "transpose_vectorize": "transpose",
    "scale_symbolic_vectorize": "scale_2d_symbolic",
}


def origin(name: str) -> str:
    """The TE function of the corpus that ``name`` computes the same values as."""
    name = name.removesuffix("_lowered").removesuffix("_packed")
    return ORIGIN.get(name, name)


@functools.lru_cache(maxsize=1)
def te_functions() -> dict:
    """The TE functions themselves (TVM objects), by name: the oracle for execution."""
    return _te()


@functools.lru_cache(maxsize=1)
def corpus() -> tuple[tuple[str, str, str], ...]:
    """``(name, family, text)`` for every function of the TVM 0.27 corpus, TVM's own
    printing (``.script()``) of each.  Made once per session."""
    import tvm  # noqa: F401 - ImportError here means the polypad[tvm] extra is missing

    te_funcs = te_functions()
    scheduled = _schedules(te_funcs)
    families = [("te", te_funcs), ("schedule", scheduled),
                ("lowered", _lowered(te_funcs, scheduled)), ("packed", _packed(te_funcs))]
    return tuple((name, family, made.script())
                 for family, funcs in families for name, made in funcs.items())


if __name__ == "__main__":  # print the corpus, for reading
    for name, family, text in corpus():
        print(f"# ===== {name} ({family})\n{text}")
