"""The search space: one :class:`Candidate` per combination of the choices a
schedule of the nest makes, enumerated from the nest itself.

The choices, for the root stage (:mod:`.nest`):

- ``tile_inner`` and ``tile_outer``: the factors its innermost and second
  innermost spatial loops are split by (0: not split).  Divisors of the extent
  come first; a factor that does not divide leaves a tail run under a guard
  (``tail="predicate"``).
- ``reduction``: where its reduction loops go, ``"inner"`` (innermost, as
  written) or ``"outer"`` (outside the tile's inner loops: the tile of the
  output is a register tile, held across the whole reduction).
- ``parallel``, ``vectorize``, ``unroll``: whether the outermost loop runs on
  the cores (fused with the next when it has fewer iterations than cores x 2),
  the innermost spatial loop in vector lanes, the tile's second loop unrolled
  (where the tile holds at most :data:`UNROLL_MAX` vector statements).
- ``rfactor``: for a stage whose innermost loop is a reduction, the number of
  partial results it is factored into (0: none); the partial results are then
  vector lanes.
- ``cache_write``: the register tile of a reduction written to a cache at the
  tile's outer loop, and copied out after it.
- ``at``: for each producer, the index of the root's loop it is computed (and
  stored) at, among the loops outside the tile; -1 leaves it where it is.
- ``producer_reduction``: as ``reduction``, for the producers' own loops, or
  ``"rfactor"``: a producer's innermost reduction factored into 16 partial
  results in vector lanes (the softmax recipe's row sums).
- ``panel``: with ``swap`` and a register tile, the reduction in blocks of this
  many steps, outside the row tiles, and the operand that does not move along
  the rows packed, per block, into a buffer of its own (``cache_read`` at the
  block loop; the tile ``cache_write`` in ``"local"``).  0: none.
  :data:`WHOLE`: the whole reduction in one pass, :data:`PANEL_TILES` tiles side
  by side sharing one packed panel of the operand (``cache_read`` at the panel
  loop), and the tile cached before its init is decomposed, so that its zeros
  start in registers and the output is only written: docs/schedules.md's
  matmul.
- ``split_reduction``: for a stage whose outermost loop is a reduction (a column
  sum, ``A.T @ x``), that loop split into this many parts whose partial results
  are rows of a buffer of their own (``rfactor`` of the outer part), the parts
  on the cores (the cores' rows of the matrix, read in order, where the
  parallel loop over the columns had each core read short pieces of every
  row), then summed; ``tile_outer`` steps of the reduction unrolled over
  ``tile_inner`` columns in vector lanes: 4 or 8 rows added into each vector of
  partial results before it is stored.
- ``epilogue``: where the last blocks are an epilogue (:attr:`.nest.Nest.epilogue`:
  a linear layer's bias and ReLU), 0 tiles the last block as the root (the
  reduction before it a producer); 1 and 2 tile the reduction as the root, its
  epilogue after it, on the cores and in vector lanes as the candidate says (1),
  or per register tile (2: ``reverse_compute_at`` at the tile's outer loop,
  reading the tile from L1 just after it is stored).
- ``swap``: the tile's two outer loops swapped, so that the outer part of the
  innermost spatial loop runs outside that of the second (TVM's and
  docs/schedules.md's matmul: column panels outside, each panel of the operand
  that does not move with the rows reused from cache by every row tile).  Only
  where both loops are tiled.

Every candidate is only a description: :mod:`.realize` builds it from the
legality-checked primitives, and a primitive's refusal drops the candidate.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, replace

from .nest import PANEL_BLOCK, Nest, packs_panel

VECTOR_FACTORS = (8, 16, 32, 64)
OUTER_FACTORS = (2, 4, 5, 8, 16)
#: Partial results of a factored reduction: one vector of 16 floats, or two, whose
#: chains of adds overlap their latency (the matvec recipe's 32).  A producer's
#: reduction takes the first.
RFACTOR_LANES = (16, 32)
#: The most vector statements an unrolled tile may hold (its rows times the vectors
#: of a row): the register tiles of docs/schedules.md hold 16 to 20; a 16 x 64 tile of
#: a stencil took Numba 6 to 14 s to compile, for no gain.
UNROLL_MAX = 24
#: More producers than this are placed at one loop together (the space would grow as
#: the number of loops to the power of the producers).
UNIFORM_ABOVE = 2
#: The whole reduction in one pass, with a packed panel (see the module docstring).
WHOLE = -1
#: Reduction blocks of a packed panel (0: none): 128 x 32 floats of B is 16 KB, in L1;
#: or the whole reduction, the panel in L2.
PANELS = (0, PANEL_BLOCK, WHOLE)
#: The parts of a reduction split across the cores (``split_reduction``): a multiple
#: of the cores of most machines; ``A.T @ x`` at 4096^2 ran as fast in 2, 4 or 16.
SPLIT_PARTS = 16
#: The reduction steps a split reduction adds into each vector of partial results.
SPLIT_ROWS = (0, 4, 8)
#: Tiles side by side in a panel of the whole reduction: 4 x 32 columns of 1024 floats
#: is 512 KB, half of L2.
PANEL_TILES = 4


@dataclass(frozen=True)
class Candidate:
    """One point of the space (see the module docstring)."""

    tile_inner: int = 0
    tile_outer: int = 0
    reduction: str = "inner"
    parallel: bool = False
    vectorize: bool = False
    unroll: bool = False
    rfactor: int = 0
    cache_write: bool = False
    at: tuple[int, ...] = ()
    producer_reduction: str = "inner"
    swap: bool = False
    panel: int = 0
    split_reduction: int = 0
    epilogue: int = 0

    def to_json(self) -> dict:
        """The candidate as JSON values (tuples as lists)."""
        data = asdict(self)
        data["at"] = list(self.at)
        return data

    @classmethod
    def from_json(cls, data: dict) -> Candidate:
        """The candidate :meth:`to_json` wrote; a ``TypeError`` or ``ValueError`` for
        anything else."""
        if not isinstance(data, dict) or set(data) - set(cls.__dataclass_fields__):
            raise ValueError("not a candidate")
        fields = dict(data)
        fields["at"] = tuple(int(a) for a in fields.get("at", ()))
        return cls(**fields)

    @property
    def is_plain(self) -> bool:
        """Whether the candidate takes no step: the function as written."""
        return self == Candidate(at=tuple(-1 for _ in self.at))

    @property
    def key(self) -> str:
        """A short text naming the candidate, stable across processes."""
        if self.is_plain:
            return "plain"
        parts = [f"ti{self.tile_inner}", f"to{self.tile_outer}", self.reduction[0]]
        if self.swap:
            parts.append("sw")
        if self.panel:
            parts.append("pkall" if self.panel == WHOLE else f"pk{self.panel}")
        parts += [flag for flag, on in (("par", self.parallel), ("vec", self.vectorize),
                                        ("unr", self.unroll), ("cw", self.cache_write)) if on]
        if self.rfactor:
            parts.append(f"rf{self.rfactor}")
        if self.split_reduction:
            parts.append(f"sr{self.split_reduction}")
        if self.epilogue:
            parts.append(f"ep{self.epilogue}")
        if self.at:
            parts.append("at" + ",".join(map(str, self.at)))
            parts.append("p" + self.producer_reduction[0])
        return "-".join(parts)


def fuses(extent: int | None) -> bool:
    """Whether an outermost parallel loop of ``extent`` is fused with the next: too
    few iterations to share among cores evenly (a batch of 1 to 7 images)."""
    return extent is not None and extent < FUSE_BELOW


FUSE_BELOW = 8


def factors(extent: int | None, choices: tuple[int, ...]) -> list[int]:
    """The split factors to try for a loop of ``extent``: 0 (no split), then the
    ``choices`` below the extent, divisors first."""
    if not extent or extent < 2:
        return [0]
    below = [f for f in choices if f < extent]
    return [0] + [f for f in below if extent % f == 0] + [f for f in below if extent % f]


def outer_loops(nest: Nest, ti: int, to: int, parallel: bool, rf: int,
                swap: bool = False) -> int:
    """How many of the root's loops a candidate leaves outside its tile, where the
    producers may go (the same count :mod:`.realize` builds)."""
    spatial = nest.root.spatial
    if not spatial:
        return 0
    first = spatial[0].extent
    if rf:
        count = len(spatial)
    else:
        count = max(len(spatial) - 2, 0) + (len(spatial) >= 2) + bool(ti)
        # the outermost loop is the outer part of a split where the nest is that short
        factor = to if len(spatial) == 2 else ti if len(spatial) == 1 else 0
        if swap and len(spatial) == 2:
            first, factor = spatial[1].extent, ti
        if factor and first:
            first = -(-first // factor)
    if parallel and count >= 2 and fuses(first):
        count -= 1
    return count


def plain(nest: Nest) -> Candidate:
    """The candidate of ``nest`` that takes no step."""
    return Candidate(at=tuple(-1 for _ in nest.producers))


def enumerate_space(nest: Nest) -> list[Candidate]:
    """Every candidate of ``nest``'s space, in a fixed order."""
    out = _space(nest)
    if nest.epilogue is not None:
        for cand in _space(nest.epilogue):
            out.append(replace(cand, epilogue=1))
            if cand.cache_write:  # the epilogue per register tile, after its copy-out
                out.append(replace(cand, epilogue=2))
    return out


def view(nest: Nest, cand: Candidate) -> Nest:
    """The nest ``cand`` schedules: ``nest``, or its epilogue view."""
    if cand.epilogue:
        if nest.epilogue is None:
            raise ValueError(f"candidate {cand.key} needs an epilogue, which the nest has not")
        return nest.epilogue
    return nest


def _space(nest: Nest) -> list[Candidate]:
    root = nest.root
    spatial, reduction = root.spatial, root.reduction
    inner = factors(spatial[-1].extent, VECTOR_FACTORS) if spatial else [0]
    outer = factors(spatial[-2].extent, OUTER_FACTORS) if len(spatial) >= 2 else [0]
    places = ("inner", "outer") if reduction and spatial else ("inner",)
    innermost_reduces = bool(root.loops) and root.loops[-1].kind == "reduction"
    rfactors = (0, *RFACTOR_LANES) if innermost_reduces else (0,)
    # the producers may go at any loop outside the tile (one per spatial loop at most)
    loops = (-1, *range(len(spatial)))
    if len(nest.producers) > UNIFORM_ABOVE:
        # a chain of producers (softmax's three) goes inside at one loop, or stays
        placements = [(a,) * len(nest.producers) for a in loops]
    else:
        placements = list(itertools.product(*[loops] * len(nest.producers)))
    producer_places = (("inner", "outer") if any(p.reduction and p.spatial
                                                 for p in nest.producers) else ("inner",))
    if any(p.loops and p.loops[-1].kind == "reduction" for p in nest.producers):
        producer_places += ("rfactor",)
    # a panel: one reduction loop, longer than a block, and a read still along the rows
    panel_ok = packs_panel(root)
    out: list[Candidate] = []
    for ti, to, place, par, vec, unr, rf, cw, sw in itertools.product(
            inner, outer, places, (True, False), (True, False), (False, True), rfactors,
            (False, True), (False, True)):
        if sw and not (ti and to):
            continue  # only two tiled loops are swapped
        if unr and not to:
            continue  # only the tile's second loop is unrolled
        if unr and to * max(1, -(-(ti or spatial[-1].extent or 1) // root.lanes)) > UNROLL_MAX:
            continue  # an unrolled tile this large takes LLVM seconds to compile
        if rf and (ti or to or place != "inner"):
            continue  # rfactor factors the innermost reduction of the untiled nest
        if cw and place != "outer":
            continue  # a cache is a register tile only around the whole reduction
        places_at = outer_loops(nest, ti, to, par, rf, sw)
        if cw and not places_at:
            continue  # the cache goes at a loop outside the tile
        for at in placements:
            if any(a >= places_at for a in at):
                continue  # no such loop outside the tile
            for pplace in (producer_places if any(a >= 0 for a in at) else ("inner",)):
                for pk in (PANELS if sw and cw and place == "outer" and panel_ok else (0,)):
                    if pk == WHOLE and any(a >= 0 for a in at):
                        continue  # its panel loop is one more outside the tile
                    out.append(Candidate(ti, to, place, par, vec, unr, rf, cw, tuple(at),
                                         pplace, sw, pk))
    return out + _split_reductions(nest, inner)


def _split_reductions(nest: Nest, inner: list[int]) -> list[Candidate]:
    """The ``split_reduction`` candidates: for a stage whose outermost loop is a
    reduction long enough to give each part at least 16 steps."""
    root = nest.root
    first = root.loops[0] if root.loops else None
    if (not root.spatial or first.kind != "reduction"
            or (first.extent or 0) < SPLIT_PARTS * 16):
        return []
    left = tuple(-1 for _ in nest.producers)
    out = []
    for ti, rows, vec in itertools.product(inner, SPLIT_ROWS, (True, False)):
        vectors = -(-(ti or root.spatial[-1].extent or 1) // root.lanes)
        if rows and rows * vectors > UNROLL_MAX:
            continue  # an unrolled tile this large takes LLVM seconds to compile
        out.append(Candidate(tile_inner=ti, tile_outer=rows, parallel=True, vectorize=vec,
                             unroll=bool(rows), at=left, split_reduction=SPLIT_PARTS))
    return out
