"""Model extraction on RFC 0077's examples, against hand-written isl.

Each expectation was derived from the example's text by hand: loop bounds
and affine guards give the domain, the indices give the access relations.
"""

from pathlib import Path

import islpy as isl
import pytest

from polypad.model import extract
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"


def model_of(name):
    path = EXAMPLES / f"{name}.py"
    return extract(parse(path.read_text(), filename=str(path)))


def union(text):
    return isl.UnionMap(text)


def check(st, domain, reads=None, writes=None):
    assert st.domain.is_equal(isl.Set(domain)), f"{st.name}: {st.domain}"
    if reads is not None:
        assert st.reads.is_equal(union(reads)), f"{st.name} reads {st.reads}"
    if writes is not None:
        assert st.writes.is_equal(union(writes)), f"{st.name} writes {st.writes}"


def test_row_summation_split_guard_enters_the_domain():
    s0, s1 = model_of("row_summation_split").statements
    check(s0, "{ S0[i] : 0 <= i < 16 }", "{ }", "{ S0[i] -> B[i] : 0 <= i < 16 }")
    guarded = "0 <= i < 16 and 0 <= jo < 4 and 0 <= ji < 4 and 4jo + ji < 14"
    check(s1, f"{{ S1[i, jo, ji] : {guarded} }}",
          f"{{ S1[i, jo, ji] -> A[i, jo, ji] : {guarded}; S1[i, jo, ji] -> B[i] : {guarded} }}",
          f"{{ S1[i, jo, ji] -> B[i] : {guarded} }}")


def test_row_summation_overcompute_has_no_guard():
    _, s1 = model_of("row_summation_overcompute").statements
    check(s1, "{ S1[i, jo, ji] : 0 <= i < 16 and 0 <= jo < 4 and 0 <= ji < 4 }")
    assert s1.domain.count_val().to_python() == 16 * 16


def test_transform_layout_cache_padding_stage():
    m = model_of("transform_layout_cache_after")
    fill, pad = m.statements[0], m.statements[1]
    check(fill, "{ S0[i] : 0 <= i < 14 }", "{ S0[i] -> A[i] : 0 <= i < 14 }",
          "{ S0[i] -> A_cache[floor(i/4), i mod 4] : 0 <= i < 14 }")
    check(pad, "{ S1[io, ii] : 0 <= io < 4 and 0 <= ii < 4 and 4io + ii >= 14 }", "{ }",
          "{ S1[3, ii] -> A_cache[3, ii] : 2 <= ii <= 3 }")
    # the padding stage writes exactly the two padding elements
    assert pad.domain.count_val().to_python() == 2
    # and together the two stages write every element of A_cache once
    cover = fill.writes.union(pad.writes).range()
    assert cover.is_equal(isl.UnionSet("{ A_cache[o0, o1] : 0 <= o0 < 4 and 0 <= o1 < 4 }"))


def test_implicit_default_conv1d_with_let_and_offset_layout():
    assume, init, update = model_of("implicit_default_step1").statements
    check(assume, "{ S0[io, ii] : 0 <= io < 3 and 0 <= ii < 8 }",
          "{ S0[io, ii] -> A[io, ii] : 0 <= io < 3 and 0 <= ii < 8 }", "{ }")
    check(init, "{ S1[Bi] : 0 <= Bi < 18 }", writes="{ S1[Bi] -> B[Bi] : 0 <= Bi < 18 }")
    dom = "0 <= Bi < 18 and 0 <= fi < 3 and 0 <= Bi - fi + 2 < 16"
    check(update, f"{{ S2[Bi, fi] : {dom} }}",
          f"{{ S2[Bi, fi] -> B[Bi] : {dom}; S2[Bi, fi] -> F[fi] : {dom}; "
          f"S2[Bi, fi] -> A[floor((Bi - fi + 4)/8), (Bi - fi + 4) mod 8] : {dom} }}",
          f"{{ S2[Bi, fi] -> B[Bi] : {dom} }}")


def test_conv1d_option2_reads_and_writes_shifted_indices():
    init, update = model_of("conv1d_option2").statements
    check(init, "{ S0[i] : 0 <= i < 14 }",
          writes="{ S0[i] -> B[floor(i/4), i mod 4] : 0 <= i < 14 }")
    dom = "0 <= io < 4 and 0 <= ii < 4 and 0 <= f < 3 and 0 <= 4io + ii - f < 14"
    check(update, f"{{ S1[io, ii, f] : {dom} }}",
          writes=f"{{ S1[io, ii, f] -> B[io + floor((ii - f)/4), (ii - f) mod 4] : {dom} }}")
    # as a set of elements, the update writes exactly B's 14 logical elements
    written = update.writes.range()
    assert written.is_equal(isl.UnionSet(
        "{ B[o0, o1] : 0 <= o0 < 4 and 0 <= o1 < 4 and 4o0 + o1 < 14 }"))


def test_multi_semantics_two_assumes_over_two_layouts():
    first, second, init, update = model_of("multi_semantics_transform_j").statements
    assert first.is_assume and second.is_assume
    check(first, "{ S0[io, ii, jo, ji] : 0 <= io < 4 and 0 <= ii < 4 and 0 <= jo < 8 "
          "and 0 <= ji < 8 }")
    check(second, "{ S1[io, ii, j] : 0 <= io < 4 and 0 <= ii < 4 and 0 <= j < 60 }",
          "{ S1[io, ii, j] -> A[io, ii, floor(j/8), j mod 8] : 0 <= io < 4 and 0 <= ii < 4 "
          "and 0 <= j < 60 }", "{ }")
    check(update, "{ S3[i, j] : 0 <= i < 14 and 0 <= j < 60 }",
          writes="{ S3[i, j] -> B[i] : 0 <= i < 14 and 0 <= j < 60 }")


def test_sequential_access_guard():
    (st,) = model_of("sequential_access_14_after").statements
    check(st, "{ S0[io, ii] : 0 <= io < 4 and 0 <= ii < 4 and 4io + ii < 14 }", "{ }",
          "{ S0[io, ii] -> A[io, ii] : 0 <= io < 4 and 0 <= ii < 4 and 4io + ii < 14 }")
    assert st.block == "compute"


def test_data_dependent_guard_is_a_flagged_over_approximation():
    first, second = model_of("simplify_data_dependent_before").statements
    for st in (first, second):
        assert st.may and st.dropped_guards
        check(st, f"{{ {st.name}[i] : 0 <= i < 16 }}")
    # the guard's load is still a read of the statement
    assert first.reads.is_equal(union("{ S0[i] -> A[i] : 0 <= i < 16 }"))


def test_merge_loops_stencil_reads_neighbours():
    _, stencil = model_of("merge_loops_stencil_before").statements
    dom = "0 < i < 15"
    check(stencil, f"{{ S1[i] : {dom} }}",
          f"{{ S1[i] -> A[o] : {dom} and i - 1 <= o <= i + 1 }}",
          f"{{ S1[i] -> A[i] : {dom} }}")


@pytest.mark.parametrize("name", ["reduce_extents_before", "never_read_after"])
def test_schedule_orders_statements_like_the_text(name):
    m = model_of(name)
    tree_map = m.schedule_tree().get_map().intersect_domain(m.schedule_tree().get_domain())
    # the schedule map and the schedule tree order every pair of instances alike
    before_map = m.schedule.lex_lt_union_map(m.schedule)
    before_tree = tree_map.lex_lt_union_map(tree_map)
    assert before_map.is_equal(before_tree)
