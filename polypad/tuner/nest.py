"""What the search needs to know of a function: its stages, their loops, and how
each loop walks memory.

A *stage* is a block.  The *root* is the last block, whose loops the search
tiles; its *producers* are the earlier blocks that write a buffer the function
allocates and the root reads (or another producer reads), which the search may
compute inside the root's loops.  For each loop of a stage, isl says (from the
model's access relations, exactly) whether it is *spatial* (the stage's store moves with it) or a
*reduction* (the store stays put while the statement reads what it writes), and
for each access whether one step of the loop moves it by one element of the
innermost dimension (``unit``), not at all (``zero``) or otherwise (``other``,
a gather or a stride).  The cost model reads these; the legality of every step
is still decided by the primitives themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import islpy as isl

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.schedule import Schedule


@dataclass(frozen=True)
class LoopInfo:
    """One loop of a stage in the plain function."""

    name: str  # its name in the plain function (``Schedule.get_loops``)
    var: str  # the loop variable
    extent: int | None  # None where it is not a constant
    kind: str  # "spatial" or "reduction"
    strides: tuple[str, ...]  # per access of the stage: "unit", "zero" or "other"
    #: Per access: the dimension one step of the loop moves by one element (the last
    #: for a "unit" stride; matmul ``A[i, k] * B[j, k]``'s ``B`` moves in its first
    #: along ``j``), or None.
    moves: tuple[int | None, ...] = ()


@dataclass(frozen=True)
class StageInfo:
    """One block: its name, its loops (outermost first), what it writes."""

    block: str
    loops: tuple[LoopInfo, ...]
    writes: str  # the buffer its last store writes
    has_init: bool  # a reduction with an init store (or T.init) in the block
    lanes: int  # vector lanes of 512 bits for the dtype it writes
    reads: tuple[str, ...] = ()  # the buffers its last store reads, per access

    @property
    def spatial(self) -> tuple[LoopInfo, ...]:
        return tuple(loop for loop in self.loops if loop.kind == "spatial")

    @property
    def reduction(self) -> tuple[LoopInfo, ...]:
        return tuple(loop for loop in self.loops if loop.kind == "reduction")

    @property
    def instances(self) -> int:
        total = 1
        for loop in self.loops:
            total *= loop.extent or 64
        return total

    def loop(self, var: str) -> LoopInfo | None:
        return next((loop for loop in self.loops if loop.var == var), None)


@dataclass(frozen=True)
class Nest:
    """The stages of a function: the root and the producers it may compute inside."""

    root: StageInfo
    producers: tuple[StageInfo, ...]
    others: tuple[str, ...]  # blocks the search leaves where they are
    #: An epilogue: the blocks after the root (elementwise, reading what it writes:
    #: a linear layer's bias and ReLU after its product), see :func:`analyze`.
    consumers: tuple[StageInfo, ...] = ()
    #: The other view of a function whose last blocks are an epilogue: the reduction
    #: before them as the root, they as its consumers (:func:`_epilogue_root`); the
    #: search tries both (``Candidate.epilogue``).
    epilogue: Nest | None = None


def analyze(func: n.PrimFunc) -> Nest:
    """The :class:`Nest` of ``func``; a :class:`~polypad.errors.PolypadError` for a
    function the search cannot take (no block, or buffers of a symbolic shape)."""
    for param in func.params:
        if not isinstance(param, n.Buffer):
            raise PolypadError(f"autoschedule: {func.name} takes the scalar {param.name}; "
                               "bind the sizes to constants first")
        if not all(isinstance(d, int) for d in param.shape):
            raise PolypadError(f"autoschedule: buffer {param.name} of {func.name} has a "
                               "symbolic shape; bind the sizes to constants first")
    blocks = [b.name for b in walk(func.body) if isinstance(b, n.Block)]
    if not blocks:
        raise PolypadError(f"autoschedule: {func.name} has no block to schedule; name the "
                           "loop nest's body with T.block")
    model = extract(func)
    stages = {name: _stage(func, model, name) for name in blocks}
    allocated = {a.buffer.name for a in walk(func.body) if isinstance(a, n.Allocate)}
    nest = _view(model, stages, blocks, allocated, len(blocks))
    main = _epilogue_root(model, stages, blocks, allocated)
    if main == blocks[-1]:
        return nest
    return replace(nest, epilogue=_view(model, stages, blocks, allocated,
                                        blocks.index(main) + 1))


def _view(model, stages: dict, blocks: list[str], allocated: set[str], end: int) -> Nest:
    """The nest whose root is ``blocks[end - 1]``, the blocks after it its consumers."""
    consumers = tuple(stages[b] for b in blocks[end:])
    blocks = blocks[:end]
    root = stages[blocks[-1]]
    # The producers of the root, and theirs: a block writing a buffer the function
    # allocates that the root reads, or that such a block reads (softmax's max, read
    # by exp, whose E the root reads).
    needed = _buffers_read(model, root.block)
    chosen: set[str] = set()
    for b in reversed(blocks[:-1]):
        if stages[b].writes in allocated and stages[b].writes in needed:
            chosen.add(b)
            needed |= _buffers_read(model, b)
    producers = tuple(stages[b] for b in blocks[:-1] if b in chosen)
    others = tuple(b for b in blocks[:-1] if stages[b] not in producers)
    return Nest(root, producers, others, consumers)


#: A reduction is the root under an epilogue that does this many times less work.
EPILOGUE_RATIO = 8


def _epilogue_root(model, stages: dict, blocks: list[str], allocated: set[str]) -> str:
    """The block the search tiles: the last, unless the last blocks are an epilogue,
    elementwise blocks (no reduction) after a reduction that :func:`packs_panel`,
    whose allocated output they read and which does :data:`EPILOGUE_RATIO` times
    their work or more (a matmul then a bias and ReLU: tiling the ReLU's loops, with
    the product computed per tile, loses the matmul's panel).  Softmax's division
    is no epilogue: its row sums do as much work as it does."""
    tail: list[str] = []
    for name in reversed(blocks[1:]):
        if stages[name].reduction:
            break
        tail.append(name)
    if not tail:
        return blocks[-1]
    main = blocks[-len(tail) - 1]
    stage = stages[main]
    read = set().union(*(_buffers_read(model, b) for b in tail))
    work = sum(stages[b].instances for b in tail)
    if (packs_panel(stage) and stage.writes in allocated and stage.writes in read
            and stage.instances >= EPILOGUE_RATIO * work):
        return main
    return blocks[-1]


#: The reduction blocks of a packed panel (``Candidate.panel``): 128 steps.
PANEL_BLOCK = 128


def packs_panel(stage: StageInfo) -> bool:
    """Whether the search may pack a panel for ``stage`` as the root: one reduction
    loop longer than a block of the panel, and an operand that stays put along the
    rows (a matmul's ``B``).  Only a root gets a panel, so only such a reduction is
    worth a view of its own as the root before an epilogue; a conv layer's, of three
    reduction loops, tiles as well computed per tile of its ReLU (Halide's schedule:
    the view with the reduction as root ran at 0.89x to 0.94x of it)."""
    reduction, spatial = stage.reduction, stage.spatial
    return (len(reduction) == 1 and (reduction[0].extent or 0) > PANEL_BLOCK
            and len(spatial) >= 2 and "zero" in spatial[-2].strides[1:])


def demand(nest: Nest, producer: StageInfo) -> tuple[bool, ...]:
    """For each of the root's spatial loops, whether what the root needs of
    ``producer`` moves with it (from isl's strides): softmax's row sums do not move
    along ``j``, so a producer computed inside a loop over ``j`` computes the whole
    row again at each step.  A producer the root does not read (softmax's max, read
    by exp) moves where its reader's demand moves and its reader's read of it does,
    loop for loop where the two stages have as many spatial loops; elsewhere it is
    taken to move (nothing recomputed)."""
    root = nest.root
    direct = [k for k, name in enumerate(root.reads, start=1) if name == producer.writes]
    if direct:
        return tuple(any(loop.strides[k] != "zero" for k in direct) for loop in root.spatial)
    moves = None  # it moves along a loop where it does for one of its readers
    for reader in nest.producers:
        read = [k for k, name in enumerate(reader.reads, start=1) if name == producer.writes]
        if not read or reader is producer:
            continue
        if len(reader.spatial) != len(root.spatial):
            return tuple(True for _ in root.spatial)
        outer = demand(nest, reader)
        mine = [o and any(loop.strides[k] != "zero" for k in read)
                for o, loop in zip(outer, reader.spatial)]
        moves = mine if moves is None else [m or o for m, o in zip(moves, mine)]
    return tuple(moves) if moves is not None else tuple(True for _ in root.spatial)


def _stage(func: n.PrimFunc, model, block: str) -> StageInfo:
    sch = Schedule(func)
    names = sch.get_loops(block)
    statements = [st for st in model.statements if st.block == block and st.is_store]
    if not statements:
        raise PolypadError(f"autoschedule: block {block!r} holds no statement")
    update = statements[-1]  # the last store: the update of a reduction, or the only one
    (write,) = _maps(update.writes) or (None,)
    if write is None:
        raise PolypadError(f"autoschedule: block {block!r} stores nothing")
    reads = _maps(update.reads)
    written = write.get_tuple_name(isl.dim_type.out)
    reads_itself = any(r.get_tuple_name(isl.dim_type.out) == written for r in reads)
    loops = []
    for name in names:
        loop = _find_loop(func, name)
        var = loop.var.name
        extent = loop.extent.value if isinstance(loop.extent, n.IntImm) else None
        store = _stride(write, var)
        # A loop of one iteration moves nothing: spatial, so that it may be fused.
        reduces = store == "zero" and reads_itself and extent != 1
        kind = "reduction" if reduces else "spatial"
        strides = tuple(_stride(m, var) for m in (write, *reads))
        moves = tuple(_moved_dim(m, var) for m in (write, *reads))
        loops.append(LoopInfo(str(name), var, extent, kind, strides, moves))
    buffer = next(b for b in _all_buffers(func) if b.name == written)
    bits = _bits(buffer.dtype)
    return StageInfo(block, tuple(loops), written, has_init=len(statements) > 1,
                     lanes=max(1, 512 // bits),
                     reads=tuple(r.get_tuple_name(isl.dim_type.out) for r in reads))


def _find_loop(func: n.PrimFunc, name: str) -> n.For:
    from polypad.ir.loop_names import find_named_loop

    return find_named_loop(func, name)


def _maps(union: isl.UnionMap) -> list[isl.Map]:
    maps: list[isl.Map] = []
    union.foreach_map(maps.append)
    return maps


def _stride(access: isl.Map, var: str) -> str:
    """How one step of loop ``var`` moves ``access`` (see :func:`_moves_by`)."""
    rank = access.dim(isl.dim_type.out)
    if _moves_by(access, var, rank - 1, 0):
        return "zero"
    if rank and _moves_by(access, var, rank - 1, 1):
        return "unit"
    return "other"


def _moved_dim(access: isl.Map, var: str) -> int | None:
    """The dimension of ``access`` one step of loop ``var`` moves by one element, the
    others staying put; None where there is none (no move, a stride, a diagonal)."""
    rank = access.dim(isl.dim_type.out)
    for dim in reversed(range(rank)):
        if _moves_by(access, var, dim, 1):
            return dim
    return None


def _moves_by(access: isl.Map, var: str, dim: int, by: int) -> bool:
    """Whether one step of loop ``var`` moves ``access`` by ``by`` elements in
    dimension ``dim`` and not at all in the others (for ``by = 0``: not at all).

    The step moves it by ``d`` where what it touches at each point is what it
    touched one step before, moved by ``d``: for an access of one element per
    point, the difference of the two; for a stencil's (``A[i]``, ``A[i + 1]``,
    ``A[i + 2]`` in one map), each element's own neighbour, not the window's
    other elements."""
    space = access.get_space()
    dims = [space.get_dim_name(isl.dim_type.in_, k)
            for k in range(space.dim(isl.dim_type.in_))]
    if var not in dims:
        return by == 0
    at = dims.index(var)
    step = isl.Map.from_domain_and_range(access.domain(), access.domain())
    for k in range(len(dims)):
        step = step.equate(isl.dim_type.in_, k, isl.dim_type.out, k) if k != at else step
    c = isl.Constraint.equality_alloc(step.get_space())
    c = c.set_coefficient_val(isl.dim_type.out, at, 1)
    c = c.set_coefficient_val(isl.dim_type.in_, at, -1).set_constant_val(-1)
    step = step.add_constraint(c)
    if step.is_empty():
        return by == 0
    after = step.range()
    now = access.intersect_domain(after)
    before = step.reverse().apply_range(access)  # each point -> what the one before touched
    return before.apply_range(_shift(access.get_space().range(), dim, by)).is_equal(now)


def _shift(space: isl.Space, dim: int, by: int) -> isl.Map:
    """The map of ``space`` moving its dimension ``dim`` by ``by`` (the identity for 0)."""
    rank = space.dim(isl.dim_type.set)
    shift = isl.Map.from_domain_and_range(isl.Set.universe(space), isl.Set.universe(space))
    for k in range(rank):
        c = isl.Constraint.equality_alloc(shift.get_space())
        c = c.set_coefficient_val(isl.dim_type.out, k, 1)
        c = c.set_coefficient_val(isl.dim_type.in_, k, -1)
        if k == dim:
            c = c.set_constant_val(-by)
        shift = shift.add_constraint(c)
    return shift


def _buffers_read(model, block: str) -> set[str]:
    names: set[str] = set()
    for st in model.statements:
        if st.block == block:
            names |= {m.get_tuple_name(isl.dim_type.out) for m in _maps(st.reads)}
    return names


def _all_buffers(func: n.PrimFunc) -> list[n.Buffer]:
    buffers = [p for p in func.params if isinstance(p, n.Buffer)]
    buffers += [a.buffer for a in walk(func.body) if isinstance(a, n.Allocate)]
    return buffers


def _bits(dtype: str) -> int:
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return int(digits) if digits else 32
