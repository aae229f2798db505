"""The seed-004 conv layer: Halide's ``apps/conv_layer``, as replayed in MLIR's transform
dialect, written in polypad's syntax and scheduled with polypad's primitives.

The algorithm (Halide's two stages; the channel ``c`` is the innermost,
contiguous dimension, as in Halide's ``Buffer`` order reversed)::

    conv[n, y, x, c] = bias[c]
    conv[n, y, x, c] += filter[rx, rz, ry, c] * input[n, y + rz, x + ry, rx]
    relu[n, y, x, c] = max(0, conv[n, y, x, c])

``conv_layer(...)`` builds it for any sizes (Halide's are N=5, CI=128,
CO=128, W=100, H=80); ``schedule(func)`` applies Halide's schedule, step by
step, through polypad's primitives:

=================================================  ==============================
Halide                                             polypad
=================================================  ==============================
``relu.split(c, co, ci, vec * tile_w)``            ``split(c, [None, 64])``
``.split(x, xo, xi, tile_h)``                      ``split(x, [None, 5])``
``.reorder(ci, xi, xo, y, n, co)``                 ``reorder(n, y, xo, co, xi, ci)``
``.parallel(y).parallel(n)``                       ``fuse(n, y)``, ``parallel``
``conv.compute_at(relu, xo)``                      ``compute_at("conv", co)``
(storage follows ``compute_at`` in Halide)         ``store_at("conv", co)``
``conv.update().reorder(c, x, y, r.x, r.y, ...)``  ``decompose_reduction``, ``reorder``
``.vectorize(c, vec).unroll(x)``                   ``vectorize(c)``, ``unroll(x)``
=================================================  ==============================

The tile of ``conv`` (5 x 64 floats) then lives on the stack and in
registers: each step of the reduction loads 4 vectors of ``filter`` and 5
scalars of ``input`` for 20 vector fused multiply-adds.  One difference from
Halide: ``co`` stays inside ``xo`` here, so that the whole row of ``x`` tiles
reuses the same input rows from cache.
"""

from __future__ import annotations

from polypad.ir.nodes import PrimFunc
from polypad.schedule import Schedule
from polypad.script import parse

#: Halide's sizes (apps/conv_layer).
HALIDE_SIZES = {"n": 5, "ci": 128, "co": 128, "w": 100, "h": 80}

_TEXT = '''
@T.prim_func
def conv_layer(input: T.Buffer(({n}, {hp}, {wp}, {ci}), "float32"),
               filter: T.Buffer(({ci}, 3, 3, {co}), "float32"),
               bias: T.Buffer(({co},), "float32"),
               relu: T.Buffer(({n}, {h}, {w}, {co}), "float32")):
    conv = T.alloc_buffer(({n}, {h}, {w}, {co}), "float32")
    for n, y, x, c in T.grid({n}, {h}, {w}, {co}):
        with T.block("conv"):
            conv[n, y, x, c] = bias[c]
            for rz, ry, rx in T.grid(3, 3, {ci}):
                conv[n, y, x, c] = (conv[n, y, x, c]
                                    + filter[rx, rz, ry, c] * input[n, y + rz, x + ry, rx])
    for n, y, x, c in T.grid({n}, {h}, {w}, {co}):
        with T.block("relu"):
            relu[n, y, x, c] = T.max(conv[n, y, x, c], T.float32(0))
'''


def conv_layer(n: int = 5, ci: int = 128, co: int = 128, w: int = 100, h: int = 80
               ) -> PrimFunc:
    """The conv layer (3 x 3 filter, no padding: the input is ``(h + 2) x (w + 2)``) at
    the given sizes, as a plain loop nest."""
    text = _TEXT.format(n=n, ci=ci, co=co, w=w, h=h, hp=h + 2, wp=w + 2)
    return parse(text, filename="conv_layer.py")


def schedule(func: PrimFunc | None = None, *, tile_x: int = 5, tile_c: int = 64) -> Schedule:
    """Halide's schedule of the conv layer (see the module docstring), on ``func``
    (:func:`conv_layer` at Halide's sizes by default); ``sch.func`` is the result and
    ``sch.trace`` the steps.  Tiles that do not divide the extents leave partial
    tiles, of a computed size (and ``x`` is then not unrolled)."""
    sch = Schedule(func if func is not None else conv_layer())
    n, y, x, c = sch.get_loops("relu")
    xo, xi = sch.split(x, [None, tile_x])
    co, ci = sch.split(c, [None, tile_c])
    sch.reorder(n, y, xo, co, xi, ci)
    sch.parallel(sch.fuse(n, y))
    sch.compute_at("conv", co)
    sch.store_at("conv", co)

    def conv_loop(var: str) -> str:  # the loop of ``var`` inside block conv
        return next(name for name in sch.get_loops("conv") if name.split("/")[-1] == var)

    init = sch.decompose_reduction("conv", conv_loop("x"))
    inner = {var: conv_loop(var) for var in ("rz", "ry", "rx", "x", "c")}
    sch.reorder(inner["rz"], inner["ry"], inner["rx"], inner["x"], inner["c"])
    sch.vectorize(inner["c"])
    if _extent(sch.func, "relu", 2) % tile_x == 0:  # partial tiles: x has no constant extent
        sch.unroll(inner["x"])
    sch.vectorize(init[-1])
    return sch


def _extent(func: PrimFunc, buffer: str, dim: int) -> int:
    """The constant extent of dimension ``dim`` of parameter ``buffer``."""
    return next(p for p in func.params if p.name == buffer).shape[dim]


def schedule_cuda(func: PrimFunc | None = None, *, x_threads: int = 20, x_per_thread: int = 5,
                  c_threads: int = 16, c_per_thread: int = 4, k_tile: int = 8,
                  k_unroll: int = 8, double_buffer: bool = False,
                  through_registers: bool = False) -> Schedule:
    """The conv layer on a GPU, as an implicit GEMM; returns the ``Schedule``.

    The convolution: a block per row ``(n, y)`` and tile of ``c_threads *
    c_per_thread`` channels (64), its ``x_threads x c_threads`` threads (20 x 16)
    each computing ``x_per_thread x c_per_thread`` outputs (5 x 4) ``x_threads``
    and ``c_threads`` apart in registers (``cache_write(..., "local")``, cut to each
    thread's box by the target); the reduction in its order (``rz``, ``ry``, then
    the input channels in steps of ``k_tile``), each step's tiles of the input
    (the row's ``x`` tile, shifted by ``ry``, times ``k_tile`` channels) and the
    filter (``k_tile`` x 64) loaded into shared memory by all the threads
    (``cache_read(..., "shared")``, spread as for the matmul), the target
    placing the two barriers each step needs.  Then the ReLU, a thread per
    element.  The loop over a step's channels is unrolled by ``k_unroll`` (8, the
    whole step: 0.64x cuDNN on an H200 against 0.53x by 2).  Extents of ``x``,
    ``c`` or the input channels that the tiles do not divide give partial tiles,
    exactly, as for the matmul (``through_registers`` still needs multiples:
    ``ArgumentValueError`` otherwise).  ``double_buffer`` and
    ``through_registers`` give the two shared tiles two stages as for the matmul
    (:func:`polypad.examples.matmul.schedule_cuda`): one barrier per step of the
    input channels (and one before each tap's first loads where the channel steps
    are odd in number); options, slower on an H200 (10.2 TFLOP/s against 12.0)."""
    from .matmul import cooperative, require_multiples, unroll_constant

    sch = Schedule(func if func is not None else conv_layer())
    if through_registers:  # its staging needs each copy of a constant size
        require_multiples(sch, "conv", {"x": x_threads * x_per_thread,
                                        "c": c_threads * c_per_thread, "rx": k_tile},
                          "conv_layer.schedule_cuda with through_registers")
    # The ReLU first (its checks are quicker before the convolution's nest grows): a
    # block per row and 64 channels, a thread per channel and x.
    n, y, x, c = sch.get_loops("relu")
    xo, xi = sch.split(x, [None, 4])
    co, ci = sch.split(c, [None, 64])
    sch.reorder(n, y, co, xo, xi, ci)
    sch.bind(sch.fuse(n, y), "blockIdx.x")
    sch.bind(co, "blockIdx.y")
    sch.bind(xi, "threadIdx.y")
    sch.bind(ci, "threadIdx.x")
    n, y, x, c, rz, ry, rx = sch.get_loops("conv")
    rows = sch.fuse(n, y)
    cb, cc, ct = sch.split(c, [None, c_per_thread, c_threads])
    xb, xx, xt = sch.split(x, [None, x_per_thread, x_threads])
    rxo, rxi = sch.split(rx, [None, k_tile])
    # The reduction keeps its order (rz, ry, rx): only the output loops move.
    sch.reorder(rows, cb, xb, rz, ry, rxo, xt, ct, rxi, xx, cc)
    sch.cache_write("conv", "conv", "shared", "conv_local", at=xb)
    # The write-back of the register tile, a thread per output as the tile is spread.
    xs, cs = sch.get_loops("conv_local")[-2:]
    xs_out, xs_in = sch.split(xs, [None, x_threads])
    cs_out, cs_in = sch.split(cs, [None, c_threads])
    sch.reorder(xs_out, cs_out, xs_in, cs_in)
    init_xt, init_ct, init_xx, init_cc = sch.decompose_reduction("conv", rz)
    sch.cache_read("conv", "input", "shared", at=rxo)
    sch.cache_read("conv", "filter", "shared", at=rxo)
    sch.bind(rows, "blockIdx.x")
    sch.bind(cb, "blockIdx.y")
    for loop, axis in ((xt, "threadIdx.y"), (ct, "threadIdx.x"), (init_xt, "threadIdx.y"),
                       (init_ct, "threadIdx.x")):
        sch.bind(loop, axis)
    for block in ("input_shared", "filter_shared"):
        cooperative(sch, block, x_threads, c_threads)
    sch.bind(xs_in, "threadIdx.y")
    sch.bind(cs_in, "threadIdx.x")
    unroll_constant(sch, xs_out, cs_out)
    sch.set_scope("conv_local", "local")
    for loop in (xx, cc, init_xx, init_cc):
        sch.unroll(loop)
    if k_unroll > 1:
        _, k_inner = sch.split(rxi, [None, k_unroll])
        sch.unroll(k_inner)
    if double_buffer:
        sch.double_buffer("input_shared", through_registers=through_registers)
        sch.double_buffer("filter_shared", through_registers=through_registers)
    return sch
