"""A :class:`~.space.Candidate` built as a schedule, from the checked primitives only.

Each step is a primitive call on a :class:`~polypad.schedule.Schedule`, which
decides its legality (isl, Z3) before it rewrites.  A step the candidate asks
for (a tile, the parallel loop, the vector loop, a producer's place) is
*required*: its refusal drops the candidate, as :class:`Refused` naming the
primitive and the reason.  A step that only follows from others (moving a
reduction's init out so that its loop vectorizes, vectorizing that init, a
producer's own vector loop) is *opportunistic*: a refusal skips it and is
counted in :attr:`Realized.skipped`.  Either way no step is applied that the
primitives did not prove legal, so a realized candidate computes what the
function does (up to the reassociation ``rfactor`` accepts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.locate import find_buffer
from polypad.schedule import Schedule

from .nest import Nest, StageInfo
from .space import PANEL_TILES, RFACTOR_LANES, WHOLE, Candidate, fuses, view

#: The side of the square blocks a transposing panel copy moves (8 x 8 floats: one
#: AVX-512 half-vector per row; 0.6-0.8 ms of the 0.8 ms the copy cost at 1024^3,
#: benchmarks/unseen_kernels.py's A @ B.T)
TRANSPOSE_BLOCK = 8


class Refused(Exception):
    """A required step of a candidate was refused: ``primitive`` and ``reason``."""

    def __init__(self, primitive: str, reason: str):
        super().__init__(f"{primitive}: {reason}")
        self.primitive = primitive
        self.reason = reason


@dataclass
class Realized:
    """A candidate built: the schedule and the opportunistic steps it skipped."""

    schedule: Schedule
    skipped: list[str] = field(default_factory=list)


class _Builder:
    def __init__(self, func: n.PrimFunc):
        self.sch = Schedule(func)
        self.skipped: list[str] = []
        self.extent: dict[str, int | None] = {}

    def need(self, primitive: str, *args, **kwargs):
        try:
            return getattr(self.sch, primitive)(*args, **kwargs)
        except PolypadError as error:
            raise Refused(primitive, f"{type(error).__name__}: {error}") from None

    def may(self, primitive: str, *args, **kwargs):
        try:
            return getattr(self.sch, primitive)(*args, **kwargs)
        except PolypadError:
            self.skipped.append(primitive)
            return None

    def split(self, loop, factor: int) -> tuple:
        extent = self.extent.get(str(loop))
        tail = "predicate"
        outer, inner = self.need("split", loop, [None, factor], tail=tail)
        self.extent[str(outer)] = -(-extent // factor) if extent else None
        self.extent[str(inner)] = factor
        return outer, inner


def realize(func: n.PrimFunc, nest: Nest, cand: Candidate) -> Realized:
    """Build ``cand`` on ``func`` (whose analysis is ``nest``); raises :class:`Refused`."""
    b = _Builder(func)
    try:
        nest = view(nest, cand)
    except ValueError as error:
        raise Refused("realize", str(error)) from None
    root = nest.root
    handles = b.sch.get_loops(root.block)
    info = dict(zip(handles, root.loops))
    for handle, loop in info.items():
        b.extent[str(handle)] = loop.extent
    spatial = [h for h in handles if info[h].kind == "spatial"]
    reduction = [h for h in handles if info[h].kind == "reduction"]
    if cand.split_reduction:
        _split_reduction(b, reduction, cand)
        for producer in nest.producers:
            _place(b, producer, -1, [], cand)
        _epilogue(b, nest, [], cand)
        return Realized(b.sch, b.skipped)
    if cand.rfactor:
        outer_part, order = _rfactor(b, root, spatial, reduction, cand)
    else:
        outer_part, order, inner_part = _tile(b, root, spatial, reduction, cand)
    if len(cand.at) != len(nest.producers):
        raise Refused("compute_at", "the candidate places another number of producers")
    if cand.parallel:
        # before the producers move in: their buffers' allocations would come between
        # the loops that fuse
        if (not cand.rfactor and cand.vectorize and order and inner_part
                and order[0] is inner_part[-1]):
            raise Refused("parallel", "the only spatial loop is the vector loop")
        outer_part = _parallel(b, order, outer_part)
    for producer, at in reversed(list(zip(nest.producers, cand.at))):
        _place(b, producer, at, outer_part, cand)
    if not cand.rfactor:
        if cand.vectorize:
            if not inner_part:
                raise Refused("vectorize", "no spatial loop to vectorize")
            b.need("vectorize", inner_part[-1])
        if cand.unroll:
            b.need("unroll", inner_part[0])
    _epilogue(b, nest, outer_part, cand)
    return Realized(b.sch, b.skipped)


def _epilogue(b: _Builder, nest: Nest, outer_part: list, cand: Candidate) -> None:
    """The root's epilogue (its consumers): per tile at the tile's outer loop, or
    after the root, its outermost loop on the cores; its innermost loop in vector
    lanes either way."""
    for consumer in nest.consumers:
        if cand.epilogue == 2:
            if not outer_part:
                raise Refused("reverse_compute_at", "no loop outside the tile")
            b.need("reverse_compute_at", consumer.block, outer_part[-1])
            loops = b.sch.get_loops(consumer.block)
            at = [str(h) for h in loops].index(str(outer_part[-1]))
            loops = loops[at + 1:]  # its own, inside the tile's loop
        else:
            loops = b.sch.get_loops(consumer.block)
            if cand.parallel and loops:
                b.may("parallel", loops[0])
                loops = loops[1:]
        if cand.vectorize and loops:
            b.may("vectorize", loops[-1])


def _tile(b: _Builder, root: StageInfo, spatial: list, reduction: list, cand: Candidate):
    outer_part: list = list(spatial[:-2])
    inner_part: list = []
    if len(spatial) >= 2:
        u = spatial[-2]
        if cand.tile_outer:
            u0, u1 = b.split(u, cand.tile_outer)
            outer_part.append(u0)
            inner_part.append(u1)
        else:
            outer_part.append(u)
    if spatial:
        v = spatial[-1]
        if cand.tile_inner:
            v0, v1 = b.split(v, cand.tile_inner)
            outer_part.append(v0)
            inner_part.append(v1)
        else:
            inner_part.append(v)
    if cand.swap and len(spatial) >= 2 and cand.tile_outer and cand.tile_inner:
        outer_part[-2:] = outer_part[-1:-3:-1]
    middle = reduction if cand.reduction == "outer" else []
    last = reduction if cand.reduction == "inner" else []
    if cand.panel == WHOLE:
        return _whole_panel(b, root, outer_part, reduction, inner_part, cand)
    if cand.panel:
        return _panel(b, root, outer_part, reduction, inner_part, cand)
    order = outer_part + middle + inner_part + last
    if [str(h) for h in order] != [str(h) for h in b.sch.get_loops(root.block)]:
        b.need("reorder", *order)
    if cand.cache_write:
        if not outer_part:
            raise Refused("cache_write", "no loop outside the tile to cache at")
        copy = b.need("cache_write", root.block, root.writes, at=outer_part[-1])
        if cand.vectorize and copy:
            # the copy-out of the tile, row by row in vector lanes (the recipe's)
            copy_loops = b.may("get_loops", copy)
            if copy_loops:
                b.may("vectorize", copy_loops[-1])
    if root.has_init and middle:
        init = b.may("decompose_reduction", root.block, middle[0])
        if init and cand.vectorize:
            b.may("vectorize", init[-1])
    return outer_part, order, inner_part


def _panel(b: _Builder, root: StageInfo, outer_part: list, reduction: list,
           inner_part: list, cand: Candidate):
    """The BLIS shape: column panels, the reduction in blocks of ``cand.panel``
    outside the row tiles, the block of the operand that does not move along the
    rows packed at the block loop, the register tile in a local cache."""
    (r,) = reduction
    r0, r1 = b.split(r, cand.panel)
    columns, rows = outer_part[-2:]
    order = [*outer_part[:-2], columns, r0, rows, r1, *inner_part]
    b.need("reorder", *order)
    init = b.need("decompose_reduction", root.block, r0)
    tile = b.need("cache_write", root.block, root.writes, "local", at=rows)
    packed = _stays_along_rows(root)
    panel = b.need("cache_read", root.block, packed, "local", at=r0)
    _lanes_last(b, root, packed, panel)
    if cand.vectorize:
        b.may("vectorize", init[-1])
        for copy in (panel, tile + "_in", tile):
            loops = b.may("get_loops", copy)
            if loops:
                b.may("vectorize", loops[-1])
    return outer_part, order, inner_part


def _whole_panel(b: _Builder, root: StageInfo, outer_part: list, reduction: list,
                 inner_part: list, cand: Candidate):
    """docs/schedules.md's matmul: panels of :data:`PANEL_TILES` tiles side by side,
    the operand that does not move along the rows packed per panel, the whole
    reduction per tile, and the tile cached before its init is decomposed (its zeros
    in registers; the output only written)."""
    (r,) = reduction
    columns, rows = outer_part[-2:]
    panels, tiles = b.split(columns, PANEL_TILES)
    order = [*outer_part[:-2], panels, rows, tiles, r, *inner_part]
    b.need("reorder", *order)
    tile = b.need("cache_write", root.block, root.writes, "local", at=tiles)
    init = b.need("decompose_reduction", root.block, r) if root.has_init else None
    packed = _stays_along_rows(root)
    panel = b.need("cache_read", root.block, packed, "local", at=panels)
    _lanes_last(b, root, packed, panel)
    if cand.vectorize:
        if init:
            b.may("vectorize", init[-1])
        for copy in (panel, tile):
            loops = b.may("get_loops", copy)
            if loops:
                b.may("vectorize", loops[-1])
    return [*outer_part[:-2], panels, rows, tiles], order, inner_part


def _lanes_last(b: _Builder, root: StageInfo, packed: str, panel: str) -> None:
    """Lay the packed panel out with the dimension the vector loop walks last, where
    the operand has it elsewhere (``A[i, k] * B[j, k]``: ``B``'s panel stored
    ``[k, j]``), and order the packing copy to write it contiguously: the tile's
    vector loads are then contiguous, as for ``A[i, k] * B[k, j]``.  The copy
    transposes once per panel what the tiles read ``rows`` times over."""
    vector = root.spatial[-1]
    at = root.reads.index(packed) + 1  # the strides and moves count the write first
    dim = vector.moves[at] if len(vector.moves) > at else None
    copy = [str(h) for h in b.sch.get_loops(panel) if str(h).startswith(f"{panel}/")]
    rank = len(copy)  # the copy's own loops, one per dimension of the panel, in order
    if vector.strides[at] != "other" or dim is None or dim >= rank - 1:
        return
    order = [d for d in range(rank) if d != dim] + [dim]
    names = [f"a{d}" for d in range(rank)]
    index_map = f"lambda {', '.join(names)}: [{', '.join(names[d] for d in order)}]"
    skipped = len(b.skipped)
    b.may("transform_layout", None, panel, index_map)
    if len(b.skipped) != skipped:
        return
    # laid out anew: the copy transposes, in TRANSPOSE_BLOCK-square blocks where the
    # two dimensions it swaps allow (rows of the source read a cache line at a
    # time, the block's writes land in as many lines), else row by row of the panel
    shape = find_buffer(b.sch.func, panel).shape
    extent = {d: shape[order.index(d)] for d in range(rank)}
    source = rank - 1  # the operand's contiguous dimension
    if all(isinstance(extent[d], int) and extent[d] % TRANSPOSE_BLOCK == 0
           for d in (source, dim)):
        others = [copy[d] for d in range(rank) if d not in (source, dim)]
        s_outer, s_inner = b.need("split", copy[source], [None, TRANSPOSE_BLOCK])
        d_outer, d_inner = b.need("split", copy[dim], [None, TRANSPOSE_BLOCK])
        b.may("reorder", *others, s_outer, d_outer, s_inner, d_inner)
        b.may("unroll", s_inner)
    else:
        b.may("reorder", *[copy[d] for d in order])


def _stays_along_rows(root: StageInfo) -> str:
    """The operand a register tile's rows share (matmul's ``B``), to pack."""
    u = root.spatial[-2]
    packed = [name for name, stride in zip(root.reads, u.strides[1:]) if stride == "zero"
              and name != root.writes]
    if not packed:
        raise Refused("cache_read", "no operand stays put along the rows")
    return packed[0]


def _rfactor(b: _Builder, root: StageInfo, spatial: list, reduction: list, cand: Candidate):
    last = reduction[-1]
    if root.has_init and spatial:
        # the init into the row, before its reduction loop (the row reduction recipe)
        b.may("decompose_reduction", root.block, last)
    extent = b.extent.get(str(last))
    tail = "partition" if extent and extent % cand.rfactor else "predicate"
    _, lanes = b.need("split", last, [None, cand.rfactor], tail=tail)
    b.need("rfactor", lanes)
    if cand.vectorize:
        b.need("vectorize", lanes)
    return list(spatial), list(spatial)


def _split_reduction(b: _Builder, reduction: list, cand: Candidate) -> None:
    """The outermost (reduction) loop in ``cand.split_reduction`` parts on the cores,
    each into a row of partial results; inside a part, ``cand.tile_outer`` of its
    steps unrolled over a tile of ``cand.tile_inner`` columns in vector lanes."""
    parts, _ = b.need("split", reduction[0], [cand.split_reduction, None])
    factored = b.need("rfactor", parts, 0)
    on_cores, steps, *spatial = factored.update
    b.need("parallel", on_cores)
    rows = columns = None
    if cand.tile_outer:
        steps, rows = b.need("split", steps, [None, cand.tile_outer])
    if cand.tile_inner and spatial:
        spatial[-1], columns = b.need("split", spatial[-1], [None, cand.tile_inner])
    order = [steps, *spatial, *(loop for loop in (rows, columns) if loop)]
    b.need("reorder", *order)
    if cand.unroll and rows:
        b.need("unroll", rows)
    if cand.vectorize and spatial:
        b.need("vectorize", order[-1])
        for loops in (factored.init, factored.write_back, factored.decomposed):
            if loops:
                b.may("vectorize", loops[-1])


def _place(b: _Builder, producer: StageInfo, at: int, outer_part: list, cand: Candidate):
    """Compute ``producer`` at the root's loop ``outer_part[at]`` and store it there,
    then give its own loops the candidate's order and vector loop."""
    if at < 0:
        loops = b.sch.get_loops(producer.block)
        if cand.parallel and loops:
            b.may("parallel", loops[0])
        own = loops
    else:
        if at >= len(outer_part):
            raise Refused("compute_at", f"the root has no loop {at} outside its tile")
        loop = outer_part[at]
        b.need("compute_at", producer.block, loop)
        b.need("store_at", producer.writes, loop)
        own = b.sch.get_loops(producer.block)[at + 1:]
    kinds = [_kind(producer, h) for h in own]
    own_spatial = [h for h, k in zip(own, kinds) if k == "spatial"]
    own_reduction = [h for h, k in zip(own, kinds) if k == "reduction"]
    if at >= 0 and cand.producer_reduction == "rfactor" and kinds and kinds[-1] == "reduction":
        # its innermost reduction in RFACTOR_LANES partial results, in vector lanes
        loop = producer.loop(str(own[-1]).split("/")[-1].split("#")[0])
        extent = loop.extent if loop is not None else None
        tail = "partition" if extent and extent % RFACTOR_LANES[0] else "predicate"
        _, lanes = b.need("split", own[-1], [None, RFACTOR_LANES[0]], tail=tail)
        b.need("rfactor", lanes)
        if cand.vectorize:
            b.need("vectorize", lanes)
        return
    if at >= 0 and cand.producer_reduction == "outer" and own_spatial and own_reduction:
        init = (b.may("decompose_reduction", producer.block, own_spatial[0])
                if producer.has_init else None)
        b.need("reorder", *own_reduction, *own_spatial)
        if init:
            b.may("vectorize", init[-1])
        if len(own_spatial) >= 2:
            b.may("unroll", own_spatial[-2])
    # (the outermost loop of a producer left in place may be its parallel one)
    if cand.vectorize and own_spatial and (at >= 0 or own_spatial[-1] != own[0]):
        b.may("vectorize", own_spatial[-1])


def _kind(stage: StageInfo, handle) -> str:
    var = str(handle).split("/")[-1].split("#")[0]
    loop = stage.loop(var)
    return loop.kind if loop is not None else "spatial"


def _parallel(b: _Builder, order: list, outer_part: list) -> list:
    """Run the outermost loop on the cores, fused with the next where it is short
    (:func:`fuses`) and the two may fuse; returns the loops outside the tile as they
    are then."""
    if not order:
        raise Refused("parallel", "no loop to run on the cores")
    first = order[0]
    if fuses(b.extent.get(str(first))) and len(outer_part) >= 2 and order[1] is outer_part[1]:
        # (a buffer allocated between the two, a whole panel's, keeps them apart)
        fused = b.may("fuse", order[0], order[1])
        if fused is not None:
            first = fused
            outer_part = [first, *outer_part[2:]]
    b.need("parallel", first)
    return outer_part
