"""The index of schedule primitives: one entry per primitive, in one table.

Each :class:`Primitive` says, for one method of
:class:`~polypad.schedule.Schedule`:

* ``family`` -- the module whose class holds the method
  (``tiling`` is :mod:`.tiling_primitives`);
* ``takes`` -- its argument checks, run in order by the ``@primitive``
  decorator before the method (:mod:`.state`): a wrong type is an
  :class:`~polypad.errors.ArgumentTypeError`, a value outside a fixed set an
  :class:`~polypad.errors.ArgumentValueError`, both naming the method and the
  parameter;
* ``legal`` -- its legality rule, one sentence, and ``checks`` -- the named
  checks (in :mod:`.legality` and :mod:`.location_legality`) or the deciders
  (in :mod:`analyses`) that enforce it, as dotted paths;
  empty where the primitive keeps the order of every instance and so is
  always legal;
* ``rewrite`` -- the function that rewrites the IR, as a dotted path; or,
  for a primitive made of others (``tile``, ``sequential_buffer_access``),
  ``via`` -- the primitives it applies.

>>> PRIMITIVES["split"].checks
('polypad.schedule.split_pad_legality.check_split_pad',)
>>> resolve(PRIMITIVES["split"].rewrite)        # polypad.schedule.split.split

Paths are text, resolved on demand (:func:`resolve`), so that the index
imports nothing: the deciders import Z3, which ``import polypad`` does not
pay for.  ``tests/schedule/test_primitive_index.py`` resolves every path,
checks that the entries and the methods match, and that docs/architecture.md
lists every primitive.

A new primitive goes in three places: its entry here, its rewrite in a
module of its own (a pure ``PrimFunc -> PrimFunc``), and its legality rule
as a named check in :mod:`.legality` (asking a decider in :mod:`analyses`);
the method in its family's module then only finds what its arguments name
and calls the check and the rewrite.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from polypad.arguments import expect, expect_choice
from polypad.ir import nodes as n


@dataclass(frozen=True)
class Takes:
    """``param`` takes an instance of ``types`` (a type, ``None``, or a tuple of them);
    ``what`` describes them in the error where type names would not."""

    param: str
    types: object
    what: str | None = None

    def check(self, arguments: dict, where: str) -> None:
        expect(arguments[self.param], self.types, self.param, where, what=self.what)


@dataclass(frozen=True)
class Each:
    """Every element of the sequence ``param`` (a ``*loops`` or a list) takes ``types``."""

    param: str
    types: object
    what: str | None = None

    def check(self, arguments: dict, where: str) -> None:
        for value in arguments[self.param]:
            expect(value, self.types, self.param, where, what=self.what)


@dataclass(frozen=True)
class OneOf:
    """``param`` is one of ``choices``."""

    param: str
    choices: tuple

    def check(self, arguments: dict, where: str) -> None:
        expect_choice(arguments[self.param], self.choices, self.param, where)


# The parameters that primitives share by name, and what each takes.  A name
# that is not in the function is then a NotFoundError from polypad.ir.locate.
BLOCK = Takes("block", (str, n.Block, None), "a block name (str) or None")
BUFFER = Takes("buffer", (str, n.Buffer), "a buffer name (str) or a Buffer")
LOOP = Takes("loop", (str, n.For), "a loop variable name (str) or a For node")
LOOP_A = Takes("loop_a", (str, n.For), "a loop variable name (str) or a For node")
LOOP_B = Takes("loop_b", (str, n.For), "a loop variable name (str) or a For node")
REFERENCES = {check.param: check for check in (BLOCK, BUFFER, LOOP, LOOP_A, LOOP_B)}

_BLOCK_NAME = Takes("block", str, "a block name (str)")
_LOOPS = Each("loops", (str, n.For), "a loop name (str) or a For node")
_REASSOCIATE = Takes("reassociate", bool)
_CACHE = (BLOCK, BUFFER, Takes("scope", str),
          Takes("name", (str, None), "a buffer name (str) or None"))

_S = "polypad.schedule."
_ORDER = _S + "legality.check_order"


@dataclass(frozen=True)
class Primitive:
    """One primitive: its method's family, argument checks, legality and rewrite."""

    name: str
    family: str
    takes: tuple
    legal: str
    checks: tuple[str, ...]
    rewrite: str | None
    via: tuple[str, ...] = ()

    def check_arguments(self, arguments: dict, where: str) -> None:
        """Run :attr:`takes` on the bound ``arguments`` of a call of ``where``."""
        for check in self.takes:
            check.check(arguments, where)


_ENTRIES = (
    # ---------------------------------------------------------------- tiling
    Primitive(
        "split", "tiling",
        (LOOP, Takes("factors", (list, tuple), "a list of ints and one None"),
         OneOf("tail", ("predicate", "partition", "pad"))),
        "always legal with tail='predicate' or 'partition' (every instance keeps its "
        "order); with tail='pad', the extra iterations stay inside every buffer and the "
        "overcompute prover shows they change nothing",
        (_S + "split_pad_legality.check_split_pad",), _S + "split.split"),
    Primitive(
        "fuse", "tiling", (_LOOPS,),
        "always legal: the fused loop runs the instances in the same order",
        (), _S + "fuse_reorder.fuse"),
    Primitive(
        "reorder", "tiling", (_LOOPS,),
        "the new order keeps every dependence; statements beside a loop of the chain (a "
        "reduction's init) move into its first or last iteration where isl proves it runs "
        "wherever they do",
        (_S + "legality.check_sunk", _ORDER), _S + "fuse_reorder.reorder"),
    Primitive(
        "tile", "tiling",
        (Takes("loops", (list, tuple), "a list of loop names"),
         Takes("factors", (list, tuple), "a list of ints"),
         OneOf("tail", ("predicate", "pad")), _LOOPS),
        "as split of each loop, then reorder",
        (_S + "split_pad_legality.check_split_pad", _S + "legality.check_sunk", _ORDER), None,
        via=("split", "reorder")),
    # ---------------------------------------------------------------- loop kinds, reductions
    Primitive(
        "parallel", "kind", (LOOP,),
        "the loop carries no dependence (a reduction's updates race: rfactor first)",
        (_S + "legality.check_independent_iterations",), _S + "loop_kinds.with_kind"),
    Primitive(
        "vectorize", "kind", (LOOP,),
        "the loop carries no dependence but the updates of an exact reduction (integers, "
        "any combiner), and no loop that its lanes cannot move below carries a floating-point "
        "reduction (fast-math would reassociate it)",
        (_S + "legality.check_vectorize", "analyses.reductions.reduction_dependences"),
        _S + "loop_kinds.with_kind"),
    Primitive(
        "unroll", "kind", (LOOP,),
        "always legal: the iterations keep their order (the extent must be a constant)",
        (), _S + "loop_kinds.with_kind"),
    Primitive(
        "rfactor", "kind", (LOOP, Takes("factor_axis", int)),
        "reassociates the reduction (any combiner of analyses.combiners), which the call "
        "accepts; the write-back stays inside every buffer; a T.init() is decomposed first",
        (_S + "legality.check_rfactor", _S + "legality.check_decompose_reduction"),
        _S + "rfactor.rfactor"),
    Primitive(
        "decompose_reduction", "kind", (BLOCK, LOOP),
        "nothing under the loop must run before the init (a guard pins loops to their "
        "first iteration where isl proves it)",
        (_S + "legality.check_decompose_reduction",), _S + "decompose.decompose"),
    # ---------------------------------------------------------------- compute location
    Primitive(
        "compute_at", "location", (BLOCK, LOOP, _BLOCK_NAME),
        "the first computation of each moved instance keeps every dependence, nothing "
        "dropped is used, and computing an instance again gives the same value",
        (_S + "location_legality.check_compute_at",), _S + "compute_at.compute_at"),
    Primitive(
        "reverse_compute_at", "location", (BLOCK, LOOP, _BLOCK_NAME),
        "each moved instance, at the end of the iteration that completes its inputs, "
        "keeps every dependence",
        (_S + "location_legality.check_reverse_compute_at",),
        _S + "reverse_compute_at.reverse_compute_at"),
    Primitive(
        "store_at", "location", (BUFFER, LOOP),
        "the function allocates the buffer around the loop, every access is inside the "
        "loop, and no value flows through it between iterations",
        (_S + "location_legality.check_store_at",), _S + "store_at.store_at"),
    # ---------------------------------------------------------------- layout and caches
    Primitive(
        "transform_layout", "layout", (BLOCK, BUFFER),
        "the map is quasi-affine and injective on the buffer; a parameter keeps its layout "
        "when the schedule preserves the interface; a pad value reads only the buffer",
        ("polypad.layout.relation.LayoutRelation.check_injective",
         _S + "interface.check_interface", _S + "pad_value.check_pad_expr"),
        _S + "layout_transform.transform_layout"),
    Primitive(
        "cache_read", "layout", _CACHE,
        "nothing the block's stage runs writes the buffer (at a loop: nothing else in the "
        "loop accesses it, and the block does not write it)",
        (_S + "legality.check_cache_read", _S + "location_legality.refuse_access"),
        _S + "cache_read.cache_read"),
    Primitive(
        "cache_write", "layout", _CACHE,
        "the block writes all of the buffer and reads only what it wrote (at a loop: "
        "nothing else in the loop accesses it)",
        (_S + "legality.check_cache_write", _S + "location_legality.refuse_access"),
        _S + "cache_write.cache_write"),
    # ---------------------------------------------------------------- loop nests of a block
    Primitive(
        "distribute", "loop",
        (BLOCK, Takes("statements", (str, int, tuple, list),
                      "a statement label (str), an index (int), or a list of them"),
         Takes("new_block", (str, None), "a block name (str) or None"),
         OneOf("position", ("before", "after"))),
        "the new order keeps every dependence",
        (_ORDER,), _S + "reschedule.distribute"),
    Primitive(
        "reorder_by_map", "loop",
        (BLOCK, Takes("band", str, "an ISL map (str)"),
         Takes("names", (tuple, list, None), "a tuple of loop names or None"), _REASSOCIATE),
        "the new order keeps every dependence (with reassociate=True, two updates of one "
        "element by one reduction may swap)",
        (_ORDER, "analyses.reductions.reduction_dependences"), _S + "reschedule.reorder_by_map"),
    Primitive(
        "sequential_buffer_access", "loop", (BLOCK, BUFFER, _REASSOCIATE),
        "as the distribute and reorder_by_map steps it derives (sequential.next_step)",
        (_ORDER,), None, via=("distribute", "reorder_by_map")),
    # ---------------------------------------------------------------- GPU axes
    Primitive(
        "bind", "gpu",
        (LOOP, OneOf("thread", ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x",
                                "threadIdx.y", "threadIdx.z"))),
        "the function runs on a GPU as it runs serially: no two blocks, and no two threads "
        "of a block that a barrier cannot order, touch one element with one writing, and "
        "every barrier the order needs is reached by every thread of the block",
        (_S + "gpu_legality.check_bind", "analyses.gpu_sync.plan_barriers"),
        _S + "loop_kinds.with_kind"),
    Primitive(
        "set_scope", "gpu", (BUFFER, OneOf("scope", ("global", "shared", "local"))),
        "the function allocates the buffer (a parameter is the caller's memory), and where "
        "loops are bound to GPU axes, the new scope makes none of them race",
        (_S + "gpu_legality.check_set_scope", "analyses.gpu_sync.plan_barriers"),
        _S + "layout_rewrite.relayout"),
    Primitive(
        "set_alignment", "gpu", (BUFFER, Takes("alignment", int)),
        "the function allocates the buffer (a parameter is the caller's memory), no view "
        "shares its memory, and the alignment is a power of two of at least an element; "
        "nothing else changes",
        (), _S + "layout_rewrite.relayout"),
    Primitive(
        "tree_reduce", "gpu", (LOOP,),
        "the partial results are a buffer the function allocates and nothing outside the "
        "tree reads a value a step of it wrote (it reassociates the combine, as rfactor "
        "does); where loops are bound to GPU axes, the tree does not race",
        (_S + "gpu_legality.check_tree_reduce", "analyses.dataflow.dependences",
         "analyses.gpu_sync.plan_barriers"),
        _S + "gpu_reduction.tree_reduce"),
    Primitive(
        "atomic", "gpu", (LOOP,),
        "numba.cuda has an atomic of the update's combiner on its dtype (a float sum is "
        "reassociated); where loops are bound to GPU axes, no access the atomics do not "
        "cover races",
        (_S + "gpu_legality.check_gpu", "analyses.gpu_sync.plan_barriers"),
        _S + "gpu_reduction.atomic"),
    Primitive(
        "double_buffer", "gpu", (BUFFER, Takes("through_registers", bool)),
        "every read of the shared tile finds the element written by its own step's copy, "
        "nothing else in the loop writes what the copy reads (the next step's copy runs "
        "before the rest of the step), and where loops are bound to GPU axes, the two "
        "stages do not race",
        (_S + "gpu_legality.check_double_buffer",
         "analyses.gpu_shared_reads.unwritten_shared_reads", _S + "gpu_legality.check_gpu",
         "analyses.gpu_sync.plan_barriers"),
        _S + "double_buffer.double_buffer"),
    # ---------------------------------------------------------------- merge
    Primitive(
        "merge_adjacent_loops", "merge", (LOOP_A, LOOP_B),
        "the merged order reverses no dependence",
        (_S + "legality.check_merge", "analyses.merge.can_merge_loops"),
        _S + "merge_loops.merge_adjacent"),
    # ---------------------------------------------------------------- overcompute
    Primitive(
        "remove_branching_through_overcompute", "overcompute",
        (BLOCK, Takes("strict_ieee", bool)),
        "a conditional goes where the overcompute prover shows running its branch "
        "everywhere changes nothing; refused when none can go",
        ("analyses.conditional.can_remove_conditional",),
        "polypad.transform.remove_branching_through_overcompute."
        "explain_branching_through_overcompute"),
    Primitive(
        "reduce_overcompute_through_branching", "overcompute", (BLOCK,),
        "a value stops being computed where a later pad value overwrites it before "
        "anything reads it; refused when there is none",
        ("analyses.padding_writes.pad_value_overwrites",),
        "polypad.transform.remove_overcompute_through_branching."
        "remove_overcompute_through_branching"),
)

PRIMITIVES: dict[str, Primitive] = {p.name: p for p in _ENTRIES}


def resolve(path: str):
    """The object a dotted ``path`` of the index names (a module's function, or a
    class's method), imported on demand."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(f"no module in {path!r}")
