"""``transform_layout`` on the RFC 0077 examples: the rewritten IR, and the kernels.

Each test reproduces an RFC step (structural equality with the example file,
or with an expected function written here where the RFC's text differs from
what it means), then runs the original and the transformed kernel on the
same data, packed into the new layout, on the reference executor and Numba.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from layout_support import (
    SENTINEL,
    check_layouts,
    load,
    padding_mask,
    strip_blocks,
)

from polypad import IndexMap, Schedule, T, parse
from polypad.ir.operators import logical_and
from polypad.ir.structural import assert_structural_equal
from polypad.ir.substitute import substitute
from polypad.model import to_set

SPLIT4 = "lambda i: [i // 4, i % 4]"

pytestmark = pytest.mark.numba


# ------------------------------------------------------------ never write / never read


@functools.cache
def never_write():
    sch = Schedule(load("never_write_before"))
    sch.transform_layout(None, "A", lambda i: [i // 4, i % 4])
    return sch.func


@functools.cache
def never_read():
    sch = Schedule(load("never_read_before"))
    sch.transform_layout(None, "A", SPLIT4)
    return sch.func


def test_without_pad_value_a_producer_gets_no_padding_stage():
    # RFC "Never write to transformation padding": nothing touches the padding.
    assert_structural_equal(never_write(), load("never_write_transformed"))


def test_without_pad_value_a_producer_leaves_the_padding_alone_at_run_time():
    out = check_layouts(load("never_write_before"), never_write(), {"A": (SPLIT4, None)})
    assert (out["A"][padding_mask(SPLIT4, (14,))] == SENTINEL).all()
    assert (out["A"][~padding_mask(SPLIT4, (14,))] == 42).all()


def test_without_pad_value_a_consumer_gets_no_assumption():
    # RFC "Never read from transformation padding".
    assert_structural_equal(never_read(), load("never_read_transformed"))
    check_layouts(load("never_read_before"), never_read(), {"A": (SPLIT4, None)})


# ------------------------------------------------------------ arguments with pad values

# RFC "Enhancement - transform_layout", arguments A and B.  The example file
# names B's padding block "B_cache_padding" (copied from the cache example);
# the block is named after the buffer it pads, "B_padding".
ARGS_AFTER = '''
@T.prim_func
def func(A: T.Buffer[(4, 4), "float32"], B: T.Buffer[(4, 4), "float32"]):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == -1.0)
    for i in T.serial(14):
        with T.block("compute"):
            B[i // 4, i % 4] = 2.0 * A[i // 4, i % 4]
    for io, ii in T.grid(4, 4):
        with T.block("B_padding"):
            if 4 * io + ii >= 14:
                B[io, ii] = -2.0
'''


@functools.cache
def args_after():
    sch = Schedule(load("transform_layout_args_before"))
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=-1)
    sch.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=-2)
    return sch.func


def test_arguments_get_an_assumption_and_a_padding_stage():
    assert_structural_equal(args_after(), parse(ARGS_AFTER))
    # Apart from the block's name, the RFC's own text.
    assert_structural_equal(strip_blocks(args_after(), ["B_padding"]),
                            strip_blocks(load("transform_layout_args_after"),
                                         ["B_cache_padding"]))


def test_arguments_run_in_the_new_layout_and_the_padding_holds_the_pad_value():
    out = check_layouts(load("transform_layout_args_before"), args_after(),
                        {"A": (SPLIT4, -1.0), "B": (SPLIT4, None)})
    assert (out["B"][padding_mask(SPLIT4, (14,))] == -2.0).all()


def test_the_new_buffer_keeps_dtype_and_scope_and_takes_the_transformed_shape():
    a, b = args_after().params
    assert (a.name, a.shape, a.dtype, a.axis_separators) == ("A", (4, 4), "float32", ())
    assert (b.name, b.shape, b.scope) == ("B", (4, 4), "global")


# ------------------------------------------------------------ multiple buffer semantics


@functools.cache
def multi_semantics():
    """The three transforms of RFC "Multiple Buffer Semantics", step by step."""
    sch = Schedule(load("multi_semantics_before"))
    steps = []
    sch.transform_layout(None, "A", lambda i, j: [i // 4, i % 4, j],
                         pad_value=lambda io, ii, j: T.undef())
    steps.append(sch.func)
    sch.transform_layout(None, "A", lambda io, ii, j: [io, ii, j // 8, j % 8], pad_value=0)
    steps.append(sch.func)
    sch.transform_layout(None, "B", SPLIT4, pad_value=lambda io, ii: T.undef())
    steps.append(sch.func)
    return tuple(steps)


def test_first_transform_assumes_undef_in_the_padding():
    assert_structural_equal(multi_semantics()[0], load("multi_semantics_transform_i"))


def test_second_transform_keeps_the_first_assumption_through_the_new_map():
    # The first assume now reads A[io, ii, j // 8, j % 8]; the new one comes first.
    assert_structural_equal(multi_semantics()[1], load("multi_semantics_transform_j"))


def test_an_undef_pad_value_of_an_output_is_a_store_of_undef():
    # The RFC writes the padding stage without a block.
    assert_structural_equal(strip_blocks(multi_semantics()[2], ["B_padding"]),
                            load("multi_semantics_transform_b"))


def test_multiple_semantics_run_with_the_composed_layout():
    composed = IndexMap(lambda i, j: [i // 4, i % 4, j]).then(
        IndexMap(lambda io, ii, j: [io, ii, j // 8, j % 8]))
    out = check_layouts(load("multi_semantics_before"), multi_semantics()[2],
                        {"A": (composed, 0), "B": (SPLIT4, None)})
    # The store of undef is removed in lowering: B's padding keeps what it held.
    assert (out["B"][padding_mask(SPLIT4, (14,))] == SENTINEL).all()


# ------------------------------------------------------------ element-wise, explicit default


@functools.cache
def elementwise():
    sch = Schedule(load("elementwise_before"))
    sch.transform_layout(None, "A", SPLIT4, pad_value=lambda io, ii: T.undef())
    first = sch.func
    sch.transform_layout(None, "B", SPLIT4, pad_value="lambda io, ii: T.undef()")
    return first, sch.func


def test_elementwise_example_assumes_and_writes_undef():
    first, second = elementwise()
    assert_structural_equal(first, load("elementwise_transform_a"))
    assert_structural_equal(strip_blocks(second), load("elementwise_transform_b"))
    check_layouts(load("elementwise_before"), second, {"A": (SPLIT4, None), "B": (SPLIT4, None)})


@functools.cache
def explicit_default():
    sch = Schedule(load("explicit_default_step0"))
    sch.work_on("producer")
    sch.transform_layout(None, "A", SPLIT4, pad_value=0)
    sch.work_on("consumer")
    sch.transform_layout(None, "A", SPLIT4, pad_value=0)
    return sch.mod


def test_explicit_default_producer_writes_and_consumer_assumes_the_pad_value():
    assert_structural_equal(strip_blocks(explicit_default()), load("explicit_default_step1"))


def test_explicit_default_pipeline_runs():
    before = load("explicit_default_step0")
    out = check_layouts(before["producer"], explicit_default()["producer"],
                        {"A": (SPLIT4, None)})
    assert (out["A"][padding_mask(SPLIT4, (14,))] == 0).all()
    check_layouts(before["consumer"], explicit_default()["consumer"], {"A": (SPLIT4, 0)})


# ------------------------------------------------------------ implicit default: an offset map

OFFSET = "lambda i: [(i + 2) // 8, (i + 2) % 8]"

# RFC "Implicitly write default value of next operator", steps 1 and 2.  The
# RFC spells the in-bounds region as `(io == 0 and ii >= 2) or (0 < io < 2) or
# (io == 2 and ii < 2)`; the primitive writes it as the logical index within
# its bounds, as the RFC's other examples do (`4 * io + ii < 14`).  The two
# are the same set (checked with isl below).
IMPLICIT_AFTER = '''
@T.prim_func
def func(A: T.Buffer[(3, 8), "float32"], F: T.Buffer[(3,), "float32"],
         B: T.Buffer[(3, 8), "float32"]):
    for io, ii in T.grid(3, 8):
        T.assume(8 * io + ii >= 2 and 8 * io + ii < 18 or A[io, ii] == 0.0)
    for Bi in T.serial(18):
        B[(Bi + 2) // 8, (Bi + 2) % 8] = 0.0
        for fi in T.serial(3):
            Ai = Bi - fi + 2
            if 0 <= Ai < 16:
                B[(Bi + 2) // 8, (Bi + 2) % 8] = (
                    B[(Bi + 2) // 8, (Bi + 2) % 8] + F[fi] * A[(Ai + 2) // 8, (Ai + 2) % 8])
    for io, ii in T.grid(3, 8):
        with T.block("B_padding"):
            if 8 * io + ii < 2 or 8 * io + ii >= 20:
                B[io, ii] = 0.0
'''


@functools.cache
def implicit_default():
    sch = Schedule(load("implicit_default_step0"))
    sch.transform_layout(None, "A", OFFSET, pad_value=0)
    sch.transform_layout(None, "B", OFFSET, pad_value=0.0)
    return sch.func


def test_an_offset_map_pads_both_ends():
    assert_structural_equal(implicit_default(), parse(IMPLICIT_AFTER))


def test_the_rfc_spelling_of_the_in_bounds_region_is_the_same_set():
    ours, rfc = implicit_default(), load("implicit_default_step1")

    def inside(func):
        outer = func.body.stmts[0]  # for io, ii: T.assume(<inside> or A[io, ii] == 0.0)
        fact = outer.body.body.value.args[0]
        return fact.a, [outer.var, outer.body.var]

    (mine, our_vars), (theirs, their_vars) = inside(ours), inside(rfc)
    theirs = substitute(theirs, dict(zip(their_vars, our_vars)))
    io, ii = our_vars
    box = to_set(logical_and(io >= 0, io < 3, ii >= 0, ii < 8), our_vars)
    assert box.intersect(to_set(mine, our_vars)).is_equal(
        box.intersect(to_set(theirs, our_vars)))


def test_an_offset_map_runs_with_zero_padding():
    out = check_layouts(load("implicit_default_step0"), implicit_default(),
                        {"A": (OFFSET, 0.0), "B": (OFFSET, None)})
    mask = padding_mask(OFFSET, (18,))
    assert mask.sum() == 6 and (out["B"][mask] == 0.0).all()
    assert np.isfinite(out["B"]).all()


# ------------------------------------------------------------ two pad values on one output

GRID = '''
@T.prim_func
def func(A: T.Buffer((6, 6), "float32"), B: T.Buffer((6, 6), "float32")):
    for i, j in T.grid(6, 6):
        with T.block("compute"):
            B[i, j] = A[i, j] * 3.0
'''

GRID_TWICE = '''
@T.prim_func
def func(A: T.Buffer((6, 6), "float32"), B: T.Buffer((2, 4, 2, 4), "float32")):
    for i, j in T.grid(6, 6):
        with T.block("compute"):
            B[i // 4, i % 4, j // 4, j % 4] = A[i, j] * 3.0
    for io, ii, j in T.grid(2, 4, 6):
        with T.block("B_padding"):
            if 4 * io + ii >= 6:
                B[io, ii, j // 4, j % 4] = 1.0
    for io, ii, jo, ji in T.grid(2, 4, 2, 4):
        with T.block("B_padding_1"):
            if 4 * jo + ji >= 6:
                B[io, ii, jo, ji] = 2.0
'''


@functools.cache
def output_twice():
    sch = Schedule(parse(GRID))
    sch.transform_layout("compute", "B", lambda i, j: [i // 4, i % 4, j], pad_value=1.0)
    sch.transform_layout("compute", "B", lambda io, ii, j: [io, ii, j // 4, j % 4],
                         pad_value=2.0)
    return sch.func


def test_a_second_pad_value_of_an_output_follows_the_first_padding_stage():
    assert_structural_equal(output_twice(), parse(GRID_TWICE))


def test_each_padding_element_holds_the_value_of_the_transform_that_made_it():
    first = IndexMap(lambda i, j: [i // 4, i % 4, j])
    composed = first.then(IndexMap(lambda io, ii, j: [io, ii, j // 4, j % 4]))
    out = check_layouts(parse(GRID), output_twice(), {"B": (composed, None)})["B"]
    io, ii, jo, ji = np.indices(out.shape)
    j_padding = 4 * jo + ji >= 6
    i_padding = (4 * io + ii >= 6) & ~j_padding
    assert (out[j_padding] == 2.0).all() and (out[i_padding] == 1.0).all()
    assert i_padding.sum() == 2 * 6 and j_padding.sum() == 2 * 4 * 2
