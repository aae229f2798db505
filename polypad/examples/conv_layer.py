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


def schedule_cuda(func: PrimFunc | None = None, *, tile_x: int = 4,
                  tile_c: int = 64) -> Schedule:
    """The conv layer on a GPU: two kernels (the convolution, then the ReLU), each with a
    block per row ``(n, y)`` and tile of ``tile_c`` channels, a thread per channel and
    per ``x`` of a ``tile_x`` tile, the ``x`` tiles in turn; the convolution's sum
    accumulates in a register (``cache_write(..., "local")`` at the thread loop).  The
    extents of ``x`` and ``c`` must be multiples of the tiles."""
    sch = Schedule(func if func is not None else conv_layer())
    for block in ("conv", "relu"):
        n, y, x, c = sch.get_loops(block)[:4]
        xo, xi = sch.split(x, [None, tile_x])
        co, ci = sch.split(c, [None, tile_c])
        sch.reorder(n, y, co, xo, xi, ci)
        rows = sch.fuse(n, y)
        if block == "conv":
            sch.cache_write("conv", "conv", "local", at=ci)
        sch.bind(rows, "blockIdx.x")
        sch.bind(co, "blockIdx.y")
        sch.bind(xi, "threadIdx.y")
        sch.bind(ci, "threadIdx.x")
    return sch
