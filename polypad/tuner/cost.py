"""The cost model: an analytic estimate of a candidate's run time, to rank the space.

Analytic, not learned, because a learned model needs hundreds of measurements
of this machine before it ranks better than first principles (Adams et al.
trained on thousands of random programs), and a 60-second budget affords a
few dozen.  The model only orders the candidates; measurement decides, and
the search also measures a seeded share of candidates the model ranks low
(:mod:`.search`), so a wrong estimate costs time, not the result.

The estimate is a product of first-order effects, each from what isl said of
the nest (:mod:`.nest`), in arbitrary units per statement instance:

- vector lanes: a vectorized loop whose accesses all move by one element or
  not at all runs ``min(lanes, extent)`` instances per instruction (at 80%);
  one with a gather or a stride gains little (``GATHER``);
- cores: a parallel loop divides by ``min(cores, its extent)`` (at 90%);
- memory: a stage whose innermost loop strides through memory (an ``other``
  access) over more than ``CACHE_ELEMENTS`` costs ``STRIDE_PENALTY`` times
  more, unless a tile of its two innermost spatial loops keeps that access in
  cache;
- register tiles: a reduction moved outside a tile that fits in the vector
  registers keeps the tile's accumulators there (``REGISTER_GAIN``); a tile
  too large for them spills (``SPILL``);
- a tile factor that does not divide its loop leaves a guarded tail, whose
  loops have no constant extent (``TAIL``);
- a parallel loop costs a fixed ``PARALLEL_OVERHEAD`` per call (waking the
  threads), which a small kernel does not win back;
- a reduction split across the cores (``split_reduction``) is the nest in
  vector lanes on the cores, with its rows unrolled in registers
  (``SPLIT_ROWS_GAIN``), plus the sum of the parts;
- an epilogue (the root's consumers) costs its own stage, less per tile
  (``EPILOGUE_AT_GAIN``);
- a producer computed inside the root's loops is recomputed on the halo of
  each tile, and runs where the root runs (its cores, its cache); what it
  stores per tile is read back from cache only where it fits in
  ``CACHE_ELEMENTS`` (else ``SPILL``).
"""

from __future__ import annotations

from .nest import Nest, StageInfo, demand
from .space import PANEL_TILES, RFACTOR_LANES, WHOLE, Candidate, fuses, view

GATHER = 2.0
STRIDE_PENALTY = 4.0
CACHE_ELEMENTS = 1 << 16
REGISTER_GAIN = 0.5
SPILL = 1.5
PARALLEL_OVERHEAD = 20_000.0
REGISTERS = 24  # vector registers a tile's accumulators may hold (of AVX-512's 32)
STREAM_GAIN = 0.3
PANEL_GAIN = 1.3
L1_ELEMENTS = 4096  # 16 KB of float32: half of L1, the rest for the tile and A
L2_ELEMENTS = 1 << 18  # 1 MB of float32
#: The whole reduction in one pass over a panel in L2 against blocks of it in L1: the
#: zoo's matmul ran 1.10x faster (4.4 against 4.85 ms, 1024^3, quiet).
WHOLE_GAIN = 1.1
#: A loop of at most this many steps does not decide how the nest walks memory.
SHORT_LOOP = 4
#: A register tile's fill and store, in steps of its reduction; a cache's copy-out.
TILE_SETUP = 4
CACHE_COPY = 2
SPLIT_COST = 1.02
CHAINS_GAIN = 1.1
#: A row of a producer's tile costs this many vectors more than its own.
ROW_OVERHEAD = 0.5
#: A producer's tile read back from L2 rather than L1.
L2_READ = 1.15
TAIL = 1.5
#: An epilogue per tile reads the tile from L1, not its own pass over memory.
EPILOGUE_AT_GAIN = 0.7
#: A split reduction's rows added into each vector of partial results in registers:
#: A.T @ x at 4096^2 ran in 1.12 ms with 8 rows against 1.52 with one (quiet).
SPLIT_ROWS_GAIN = 0.4


def estimate(nest: Nest, cand: Candidate, cores: int) -> float:
    """The model's run time of ``cand`` (units of one scalar statement instance)."""
    nest = view(nest, cand) if cand.epilogue and nest.epilogue is not None else nest
    root = nest.root
    epilogue = sum(_epilogue_cost(stage, cand, cores) for stage in nest.consumers)
    if cand.split_reduction:
        return _split_cost(root, cand, cores) + epilogue + PARALLEL_OVERHEAD
    cost = _stage_cost(root, cand, cores, tiled=bool(cand.tile_inner and cand.tile_outer))
    parallel = cand.parallel and _parallel_extent(root, cand) > 1
    for producer, at in zip(nest.producers, cand.at):
        inside = at >= 0
        # Computed at a loop, the producer's tile is what the root's loops inside it span.
        sizes = _inside(root, cand, at) if inside else []
        span = _footprint(root, cand, at) if inside else []
        rows = _product(span[:-1]) if span else None
        width = span[-1] if span else None
        lanes = min(width or producer.lanes, producer.lanes)
        factored = (inside and cand.producer_reduction == "rfactor"
                    and producer.loops[-1].kind == "reduction")
        own = (Candidate(vectorize=cand.vectorize, rfactor=RFACTOR_LANES[0]) if factored
               else Candidate(vectorize=cand.vectorize, reduction=cand.producer_reduction,
                              tile_inner=lanes, tile_outer=1,
                              # stored at the loop: its tile is a buffer of its own
                              cache_write=inside))
        stage = _stage_cost(producer, own, cores, tiled=inside, rows=rows, width=width)
        if inside and cand.vectorize and width:
            # its rows as short as the tile's: each row's loop costs about half a vector
            vectors = -(-width // producer.lanes)
            stage *= (vectors + ROW_OVERHEAD) / vectors
        if inside:
            # A producer read at offsets (a stencil's) covers more points than the root:
            # computed per tile, it computes the tile's halo again.
            if _points(producer) > _points(root):
                stage *= 1.0 + 0.5 / max(cand.tile_outer or 1, 1) + 0.1 * at
            # Inside a loop that what the root needs of it does not move along (a row
            # sum inside a loop over column tiles), it is computed again at each step.
            stage *= _recomputed(nest, producer, cand, at)
            # What it stores per tile is read back from cache only where it fits, and
            # from L1 only where it fits there.
            if _product(sizes) > CACHE_ELEMENTS:
                stage *= SPILL
            elif _product(sizes) > L1_ELEMENTS * 2:
                stage *= L2_READ
            if parallel:
                stage /= min(cores, _parallel_extent(root, cand)) * 0.9
        else:
            if cand.parallel:
                stage /= cores * 0.9
            # Left where it is, it stores all of its output before the root reads it
            # back: from memory, where it does not fit in the caches.
            if _points(producer) > CACHE_ELEMENTS:
                stage *= SPILL
        cost += stage
    return cost + epilogue + (PARALLEL_OVERHEAD if cand.parallel else 0.0)


def _epilogue_cost(stage: StageInfo, cand: Candidate, cores: int) -> float:
    """An epilogue stage: after the root, its own pass over memory, on the cores
    and in lanes as the candidate says; per tile, from L1 (``EPILOGUE_AT_GAIN``)."""
    own = Candidate(vectorize=cand.vectorize, parallel=cand.parallel)
    cost = _stage_cost(stage, own, cores, tiled=False)
    return cost * EPILOGUE_AT_GAIN if cand.epilogue == 2 else cost


def _split_cost(root: StageInfo, cand: Candidate, cores: int) -> float:
    """A reduction split across the cores (``split_reduction``): the nest as written,
    in vector lanes, on the cores, each part reading its rows in order; with rows
    unrolled, one load and store of the partial results per ``tile_outer`` steps
    (``SPLIT_ROWS_GAIN``); then the parts' rows summed."""
    vector = root.spatial[-1]  # the innermost loop, as the nest reads its rows
    speed = min(cores, cand.split_reduction) * 0.9
    if cand.vectorize:
        speed *= _lanes(vector.strides, min(root.lanes, cand.tile_inner or vector.extent
                                            or root.lanes))
    elif "other" not in vector.strides:
        speed *= 2.0  # LLVM may vectorize a unit-stride innermost loop by itself
    cost = root.instances / speed
    if cand.tile_outer:
        cost *= SPLIT_ROWS_GAIN
    columns = _product([loop.extent or 64 for loop in root.spatial])
    return cost + 2.0 * cand.split_reduction * columns


def _recomputed(nest: Nest, producer: StageInfo, cand: Candidate, at: int) -> int:
    """How many times a producer computed at the root's ``at``-th outer loop computes
    what it would compute once: the extents of the loops at or outside that one
    along which the root's demand on it does not move (:func:`.nest.demand`)."""
    moves = demand(nest, producer)
    times = 1
    for loops, extent in _outer(nest.root, cand)[:at + 1]:
        if not any(moves[k] for k in loops):
            times *= extent
    return times


def _outer(root: StageInfo, cand: Candidate) -> list[tuple[tuple[int, ...], int]]:
    """The root's loops outside its tile, outermost first, as :func:`_inside` counts
    them: for each, the spatial loops (by index) it steps and its extent."""
    spatial = [loop.extent or 64 for loop in root.spatial]
    if cand.rfactor or not spatial:
        outer = [((k,), e) for k, e in enumerate(spatial)]
    else:
        last = len(spatial) - 1
        outer = [((k,), e) for k, e in enumerate(spatial[:-2])]
        if len(spatial) >= 2:
            u = spatial[-2]
            outer.append(((last - 1,), -(-u // cand.tile_outer) if cand.tile_outer else u))
        if cand.tile_inner:
            outer.append(((last,), -(-spatial[-1] // cand.tile_inner)))
        if cand.swap and len(spatial) >= 2 and cand.tile_outer and cand.tile_inner:
            outer[-2:] = outer[-1:-3:-1]
    if cand.parallel and len(outer) >= 2 and fuses(outer[0][1]):
        outer = [(outer[0][0] + outer[1][0], outer[0][1] * outer[1][1]), *outer[2:]]
    return outer


def _footprint(root: StageInfo, cand: Candidate, at: int) -> list[int]:
    """Per spatial loop of the root, how many of its steps one iteration of the root's
    ``at``-th outer loop spans (a band of row tiles spans whole rows)."""
    spans = [loop.extent or 64 for loop in root.spatial]
    for loops, extent in _outer(root, cand)[:at + 1]:
        for k in loops:
            spans[k] = 1 if len(loops) > 1 else -(-spans[k] // extent)
    return spans


def _points(stage: StageInfo) -> int:
    total = 1
    for loop in stage.spatial:
        total *= loop.extent or 64
    return total


def _parallel_extent(stage: StageInfo, cand: Candidate) -> int:
    spatial = stage.spatial
    if not spatial:
        return 1
    first = spatial[0].extent or 64
    if len(spatial) == 1 and cand.tile_inner and not cand.rfactor:
        return -(-first // cand.tile_inner)
    if len(spatial) == 2 and cand.swap and cand.tile_inner and not cand.rfactor:
        return -(-(spatial[1].extent or 64) // cand.tile_inner)
    if len(spatial) == 2 and cand.tile_outer and not cand.rfactor:
        return -(-first // cand.tile_outer)
    if len(spatial) >= 2 and first < 8:
        first *= spatial[1].extent or 64
    return first


def _product(extents: list[int]) -> int:
    total = 1
    for extent in extents:
        total *= extent
    return total


def _inside(root: StageInfo, cand: Candidate, at: int) -> list[int]:
    """The extents of the root's loops inside its ``at``-th outer loop."""
    spatial = [loop.extent or 64 for loop in root.spatial]
    if cand.rfactor or not spatial:
        sizes = spatial
        outer_count = len(spatial)
    else:
        u = spatial[-2:-1]
        v = spatial[-1]
        outer = spatial[:-2] + ([-(-u[0] // cand.tile_outer)] if u and cand.tile_outer else u)
        outer += [-(-v // cand.tile_inner)] if cand.tile_inner else []
        if cand.swap and u and cand.tile_outer and cand.tile_inner:
            outer[-2:] = outer[-1:-3:-1]
        inner = ([cand.tile_outer] if u and cand.tile_outer else [])
        inner += [cand.tile_inner or v]
        sizes = outer + inner
        outer_count = len(outer)
    if cand.parallel and outer_count >= 2 and fuses(sizes[0]):
        sizes = [sizes[0] * sizes[1], *sizes[2:]]
    return sizes[at + 1:]


def _stage_cost(stage: StageInfo, cand: Candidate, cores: int, tiled: bool,
                rows: int | None = None, width: int | None = None) -> float:
    instances = float(stage.instances)
    spatial, reduction = stage.spatial, stage.reduction
    lanes = stage.lanes
    speed = 1.0
    if cand.rfactor and reduction:
        vector = reduction[-1]
        if cand.vectorize:
            speed *= _lanes(vector.strides, min(lanes, cand.rfactor))
            # partial results in two vectors: two chains of adds, each waiting on its
            # own latency only
            if cand.rfactor >= 2 * lanes:
                speed *= CHAINS_GAIN
    elif cand.vectorize and spatial:
        vector = spatial[-1]
        speed *= _lanes(_packed_strides(stage, cand),
                        min(lanes, cand.tile_inner or vector.extent or lanes))
    elif spatial and stage.loops[-1] is spatial[-1] and "other" not in spatial[-1].strides:
        speed *= 2.0  # LLVM may vectorize a unit-stride innermost loop by itself
    if cand.parallel and spatial:
        speed *= min(cores, _parallel_extent(stage, cand)) * 0.9
    innermost = _innermost(stage, cand)
    if (innermost is not None and "other" in innermost.strides
            and instances > CACHE_ELEMENTS and not tiled):
        speed /= STRIDE_PENALTY
    if cand.reduction == "outer" and reduction and spatial:
        if rows is None:
            # an untiled second loop runs outside the reduction: one row
            rows = cand.tile_outer or 1
            width = cand.tile_inner or spatial[-1].extent or lanes
        steps = _product([loop.extent or 64 for loop in reduction])
        speed *= _register_tile(stage, rows, width, lanes, cand.vectorize, steps,
                                cand.cache_write)
        if cand.cache_write:
            # the tile copied out (and in) once per tile, against ``steps`` updates of it
            speed *= 1.1 * steps / (steps + CACHE_COPY)
        if cand.tile_inner and cand.tile_outer and len(spatial) >= 2:
            # Per tile, the operand that moves with the inner one of the two outer tile
            # loops comes again from outside the near caches: the columns of the
            # tile's width, or with the loops swapped, the rows of its height.
            streamed, other = ((cand.tile_outer, cand.tile_inner) if cand.swap
                               else (cand.tile_inner, cand.tile_outer))
            if streamed < other and _reused(stage):
                speed *= 1 + STREAM_GAIN * (1 - streamed / other)
            if cand.panel == WHOLE:
                # the packed panel from L2 where it fits in half of it, and the output
                # only written: no pass that zeroes it, no tile loaded per block
                fits = steps * cand.tile_inner * PANEL_TILES <= L2_ELEMENTS // 2
                speed *= PANEL_GAIN * WHOLE_GAIN if fits else 1 / SPILL
            elif cand.panel:
                # the packed block's loads contiguous, from L1 where it fits there
                fits = cand.panel * cand.tile_inner <= L1_ELEMENTS
                speed *= PANEL_GAIN if fits else 1 / SPILL
    if cand.unroll and _reused(stage):
        # Unrolled, a tile's rows share the loads of the operand reused along them;
        # with no such operand (a pooling window's, a blur's) there is nothing to share.
        speed *= 1.05
    # A split that gains nothing else costs its loop (ties go to the simpler nest).
    speed /= SPLIT_COST ** (bool(cand.tile_inner) + bool(cand.tile_outer))
    if _tail(spatial, cand):
        speed /= TAIL
    return instances / speed


def _register_tile(stage: StageInfo, rows: int, width: int, lanes: int,
                   vector: bool, steps: int, cached: bool) -> float:
    """The speed-up of a ``rows`` x ``width`` tile of accumulators (rows along the
    stage's second innermost spatial loop, width along its innermost) held across a
    reduction.  Per step of the reduction the tile does ``rows * vectors`` fused
    multiply-adds; a read that does not move along the rows (isl's ``zero`` stride:
    matmul's ``B`` along ``i``) is loaded once for all of them, one that does not
    move along the width once per row (a broadcast).  The accumulators stay in
    registers only in a tile of their own (``cached``: ``cache_write``); in the
    output itself, which LLVM cannot tell apart from the operands, each is loaded
    and stored at every step.  A tile of more accumulators than :data:`REGISTERS`
    spills.  The gain is over the reduction's ``steps``, less the tile's fill and store
    (:data:`TILE_SETUP` steps' worth): a window of 2 x 2 gains little from it, and
    a vector loop around so short a reduction holds its accumulator in a register
    as well."""
    if not vector:
        return 1 / REGISTER_GAIN if rows * width <= REGISTERS else 1 / SPILL
    amortized = steps / (steps + TILE_SETUP)
    vectors = -(-width // lanes)
    if rows * vectors > REGISTERS:
        return 1 / SPILL
    spatial = stage.spatial
    u = spatial[-2] if len(spatial) >= 2 else None
    v = spatial[-1]
    write = [loop.strides[0] for loop in stage.loops]
    loads = 0
    for k in range(1, len(v.strides)):
        if [loop.strides[k] for loop in stage.loops] == write:
            continue  # the accumulator
        along_rows = u is not None and u.strides[k] != "zero"
        along_width = v.strides[k] != "zero"
        loads += (rows if along_rows else 1) * (vectors if along_width else 1)
    if not cached:
        loads += 2 * rows * vectors
    return 1 + min(rows * vectors / max(loads, 1), 4.0) * amortized


def _reused(stage: StageInfo) -> bool:
    """Whether an operand (a read other than the accumulator) stays put along one of
    the stage's two innermost spatial loops, so that a tile reuses it (matmul's A
    along ``j``, B along ``i``; nothing of a pooling window's input)."""
    write = [loop.strides[0] for loop in stage.loops]
    for k in range(1, len(stage.loops[0].strides) if stage.loops else 1):
        if [loop.strides[k] for loop in stage.loops] == write:
            continue  # the accumulator
        if any(loop.strides[k] == "zero" for loop in stage.spatial[-2:]):
            return True
    return False


def _innermost(stage: StageInfo, cand: Candidate):
    """The loop whose steps walk memory innermost in ``cand``'s order: its innermost
    loop, or the next one out where that is a short one (:data:`SHORT_LOOP`: a 2 x 2
    window's loops span a few cache lines, and the loop around them decides the
    walk)."""
    spatial, reduction = list(stage.spatial), list(stage.reduction)
    if cand.reduction == "outer" and not (cand.rfactor and reduction):
        order = spatial[:-1] + reduction + spatial[-1:]
    else:
        order = spatial + reduction
    for loop in reversed(order):
        if loop.extent is None or loop.extent > SHORT_LOOP:
            return loop
    return order[-1] if order else None


def _tail(spatial, cand: Candidate) -> bool:
    """Whether a tile factor leaves a tail: a guard in the tile's loops, which then
    have no constant extent to unroll or vectorize cleanly."""
    if cand.rfactor or not spatial:
        return False
    v = spatial[-1].extent
    u = spatial[-2].extent if len(spatial) >= 2 else None
    return bool((cand.tile_inner and v and v % cand.tile_inner)
                or (cand.tile_outer and u and u % cand.tile_outer))


def _packed_strides(stage: StageInfo, cand: Candidate) -> tuple[str, ...]:
    """The vector loop's strides, where a packed panel is read instead of its operand:
    the panel is laid out with the vector loop's dimension last
    (:func:`.realize._lanes_last`), so its loads are contiguous."""
    vector = stage.spatial[-1]
    if not cand.panel or len(stage.spatial) < 2:
        return vector.strides
    u = stage.spatial[-2]
    for k, name in enumerate(stage.reads, start=1):
        if u.strides[k] == "zero" and name != stage.writes:
            if len(vector.moves) > k and vector.moves[k] is not None:
                return (*vector.strides[:k], "unit", *vector.strides[k + 1:])
            break
    return vector.strides


def _lanes(strides: tuple[str, ...], width: int) -> float:
    if all(s in ("unit", "zero") for s in strides):
        return max(1.0, 0.8 * width)
    return GATHER
