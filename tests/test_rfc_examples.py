"""RFC 0077's examples, re-typed under tests/examples/rfc0077/, as test data.

Every example parses, prints and re-parses to an equal function, passes the verifier, and
runs identically in the reference executor and as a Numba kernel on inputs that honour its
assumptions -- except the two that read past a buffer as the RFC wrote them, which
``codegen.build`` refuses.  Steps of one RFC walk whose meaning must agree are run on
inputs related by the layout transform ``i -> (i // c, i % c)`` (packed by hand with
numpy) and compared.  Constructs we do not support (tests/examples/unsupported/) fail to
parse where they stand.

The files are read as text and parsed; they are never imported or executed.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from inputs_support import make_inputs

import codegen
from analyses import Element, Instance
from codegen import interpreter
from polypad.errors import BoundsCheckError, OutOfBoundsError, ParseError
from polypad.ir import nodes as ir
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import problems, verify
from polypad.script import parse, script

EXAMPLES = Path(__file__).parent / "examples"
RFC_FILES = sorted((EXAMPLES / "rfc0077").glob("*.py"))
IDS = [p.stem for p in RFC_FILES]

# The RFC's overcompute reads A[4, _] past A's (4, 4) shape; kept as written (see the files),
# so codegen.build refuses them (test_out_of_bounds_is_caught).
OUT_OF_BOUNDS = {"overcompute_conv1d_after", "branching_conv1d_before"}

# Unsupported file -> the text the ParseError must point at.
UNSUPPORTED = {
    "hoist_incorrect_var": "T.var(",
    "vector_dtype": '"float32x4"',
}


# ---------------------------------------------------------------- loading and running


@functools.cache
def load(stem: str) -> ir.PrimFunc | ir.IRModule:
    path = EXAMPLES / "rfc0077" / f"{stem}.py"
    return parse(path.read_text(), filename=str(path))


def functions(node) -> list[ir.PrimFunc]:
    return list(node.funcs) if isinstance(node, ir.IRModule) else [node]


def func(stem: str, name: str | None = None) -> ir.PrimFunc:
    node = load(stem)
    return node[name] if name is not None else node


@functools.cache
def reference(stem: str, name: str | None = None):
    return codegen.build(func(stem, name), target="python")


def run(kernel, *args) -> list:
    """Call ``kernel`` on copies of ``args``; return the (updated) copies."""
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel(*copies)
    return copies


def ref_run(stem: str, *args, name: str | None = None) -> list:
    return run(reference(stem, name), *args)


def assert_same(got, want) -> None:
    for g, w in zip(got, want, strict=True):
        if isinstance(w, np.ndarray) and w.dtype.kind == "f":
            # atol: sums that cancel to ~0 may differ in the last bits under fastmath.
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------- every example


@pytest.mark.parametrize("stem", IDS)
def test_round_trip(stem):
    node = load(stem)
    again = parse(script(node), filename=f"<script of {stem}>")
    assert type(again) is type(node)
    for f, g in zip(functions(node), functions(again), strict=True):
        assert f.name == g.name
        assert_structural_equal(f, g)


@pytest.mark.parametrize("stem", IDS)
def test_verifies(stem):
    for f in functions(load(stem)):
        assert problems(f) == []
        verify(f)


@pytest.mark.numba
@pytest.mark.parametrize("stem", IDS)
def test_reference_matches_numba(stem):
    if stem in OUT_OF_BOUNDS:
        pytest.skip("build refuses it: reads past A's shape (test_out_of_bounds_is_caught)")
    rng = np.random.default_rng(sum(map(ord, stem)))
    for f in functions(load(stem)):
        args = make_inputs(f, rng)
        want = run(codegen.build(f, target="python"), *args)
        got = run(codegen.build(f), *args)
        assert_same(got, want)


def test_inputs_honour_assumptions():
    rng = np.random.default_rng(0)
    (a, _) = make_inputs(func("explicit_default_step1", "consumer"), rng)
    np.testing.assert_array_equal(a[3, 2:], 0)
    (a, _) = make_inputs(func("transform_layout_args_after"), rng)
    np.testing.assert_array_equal(a[3, 2:], -1.0)
    assert np.all(a[:3] != -1.0)  # only the padding is pinned
    (a, _, _) = make_inputs(func("implicit_default_step1"), rng)
    np.testing.assert_array_equal(np.r_[a[0, :2], a[2, 2:]], 0.0)
    (a, _) = make_inputs(func("multi_semantics_transform_j"), rng)
    np.testing.assert_array_equal(a[:, :, 7, 4:], 0)
    (_, b) = make_inputs(func("remove_noop_sum_before"), rng)
    assert b[0] == 0.0
    values = {make_inputs(func("simplify_assume_scalar_before"), rng)[1] for _ in range(50)}
    assert values <= set(range(8)) and len(values) > 1


@pytest.mark.parametrize("stem", sorted(OUT_OF_BOUNDS))
def test_out_of_bounds_is_caught(stem):
    f = func(stem)
    for target in ("python", "numba"):
        with pytest.raises(OutOfBoundsError, match=r"cannot build 'func': load of "
                           r"A\[io \+ \(ii \+ f\) // 4, \(ii \+ f\) % 4\] at .* is outside "
                           r"the shape \(4, 4\) of A") as info:
            codegen.build(f, target=target)
        # The first instance in loop order that leaves A: io = 3, ii + f = 4.
        evidence = info.value.evidence
        assert evidence.instances == (Instance("compute", {"io": 3, "ii": 2, "f": 2}),)
        assert evidence.element == Element("A", (4, 0))
    # Below the build, the reference executor's own check faults on the same element.
    lowered = codegen.lower(f, check_assumptions=True)
    with pytest.raises(BoundsCheckError, match=r"load of A\[4, 0\] is outside its shape \(4, 4\)"):
        interpreter.run(lowered, *make_inputs(f, np.random.default_rng(0)))


@pytest.mark.parametrize("stem", sorted(UNSUPPORTED))
def test_unsupported_is_a_parse_error(stem):
    path = EXAMPLES / "unsupported" / f"{stem}.py"
    text = path.read_text()
    at = text.index(UNSUPPORTED[stem], text.index("@T.prim_func"))  # not in the comments
    line = text.count("\n", 0, at) + 1
    col = at - text.rfind("\n", 0, at)  # 1-based
    with pytest.raises(ParseError) as info:
        parse(text, filename=str(path))
    assert (info.value.filename, info.value.lineno, info.value.col) == (str(path), line, col)


def test_every_example_file_is_tested():
    # Guards against a file the glob misses (wrong suffix) or an empty directory.
    assert len(RFC_FILES) >= 100
    assert {p.stem for p in (EXAMPLES / "unsupported").glob("*.py")} == set(UNSUPPORTED)


# ---------------------------------------------------------------- steps that must agree


def pack(x: np.ndarray, shape: tuple, pad, offset: int = 0) -> np.ndarray:
    """``x`` laid out by ``i -> (i + offset) // c, (i + offset) % c``; the rest is ``pad``.

    ``pad`` is a scalar or an array of the packed size (arbitrary padding contents).
    """
    flat = np.resize(np.asarray(pad, dtype=x.dtype), int(np.prod(shape))).copy()
    flat[offset:offset + x.size] = x
    return flat.reshape(shape)


def unpack(y: np.ndarray, n: int, offset: int = 0) -> np.ndarray:
    return y.reshape(-1)[offset:offset + n]


def test_row_summation_overcompute_needs_zero_padding():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 14)).astype("float32")
    b = np.zeros(16, "float32")
    (_, want) = ref_run("row_summation_before", a, b)
    zero_pad = np.pad(a, ((0, 0), (0, 2))).reshape(16, 4, 4)
    junk_pad = np.pad(a, ((0, 0), (0, 2)), constant_values=7.0).reshape(16, 4, 4)
    assert_same(ref_run("row_summation_split", junk_pad, b)[1:], [want])
    assert_same(ref_run("row_summation_overcompute", zero_pad, b)[1:], [want])
    # Without the pad value the overcompute is wrong: the test can tell.
    (_, wrong) = ref_run("row_summation_overcompute", junk_pad, b)
    np.testing.assert_allclose(wrong - want, 14.0, rtol=1e-5)


def test_never_read_and_never_write_padding():
    rng = np.random.default_rng(2)
    a = rng.integers(-50, 50, 14).astype("int32")
    junk = rng.integers(-50, 50, 16).astype("int32")
    b = np.zeros(1, "int32")
    assert ref_run("never_read_before", a, b)[1][0] == a.sum()
    for stem in ("never_read_transformed", "never_read_after"):
        assert ref_run(stem, pack(a, (4, 4), junk), b)[1][0] == a.sum()
    start = pack(np.zeros(14, "int32"), (4, 4), junk)
    for stem in ("never_write_transformed", "never_write_after"):
        (out,) = ref_run(stem, start)
        np.testing.assert_array_equal(out, pack(np.full(14, 42, "int32"), (4, 4), junk))


@pytest.mark.parametrize("n", [14, 16])
def test_sequential_buffer_access_keeps_values(n):
    (want,) = ref_run(f"sequential_access_{n}_before", np.zeros(n, "int32"))
    np.testing.assert_array_equal(want, np.arange(n))
    junk = np.full(16, -9, "int32")
    for step in ("transformed", "after"):
        (out,) = ref_run(f"sequential_access_{n}_{step}", pack(np.zeros(n, "int32"), (4, 4), junk))
        np.testing.assert_array_equal(out, pack(want, (4, 4), junk))


def test_conv1d_loop_orders_agree_and_cumsum_split_does_not():
    rng = np.random.default_rng(3)
    a = rng.integers(-9, 10, 16).astype("int32")
    f = rng.integers(-9, 10, 3).astype("int32")
    b = rng.integers(-9, 10, 14).astype("int32")
    want = ref_run("conv1d_before", a, f, b)[2]
    np.testing.assert_array_equal(want, [f @ a[i:i + 3] for i in range(14)])
    for stem in ("conv1d_transformed", "conv1d_option1", "conv1d_option2"):
        out = ref_run(stem, a.reshape(4, 4), f, pack(b, (4, 4), -1))[2]
        np.testing.assert_array_equal(out, pack(want, (4, 4), -1))
    cumsum = ref_run("conv1d_cumsum_before", a, f, b)[2]
    np.testing.assert_array_equal(cumsum, np.cumsum(want))
    packed = ref_run("conv1d_cumsum_transformed", a.reshape(4, 4), f, pack(b, (4, 4), 0))[2]
    np.testing.assert_array_equal(unpack(packed, 14), cumsum)
    # The RFC's illegal intermediate loses the running sum.
    split = ref_run("conv1d_cumsum_split", a.reshape(4, 4), f, pack(b, (4, 4), 0))[2]
    np.testing.assert_array_equal(unpack(split, 14), want)


def test_overcompute_conv1d_steps_agree():
    rng = np.random.default_rng(4)
    a = rng.standard_normal(16).astype("float32")
    f = rng.standard_normal(3).astype("float32")
    b = rng.standard_normal(14).astype("float32")
    want = ref_run("overcompute_conv1d_before", a, f, b)[2]
    out = ref_run("overcompute_conv1d_transform_a", a.reshape(4, 4), f, b)[2]
    assert_same([out], [want])
    junk = pack(b, (4, 4), 5.0)
    zero_padded = pack(want, (4, 4), 0.0)
    stems = ["overcompute_conv1d_transform_b", "overcompute_conv1d_sequential"]
    stems += [f"branching_conv1d_step{k}" for k in (1, 2, 3, 4)]
    for stem in stems:
        assert_same([ref_run(stem, a.reshape(4, 4), f, junk)[2]], [zero_padded])


def test_transform_layout_pad_values():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(14).astype("float32")
    b = np.zeros(14, "float32")
    want = ref_run("transform_layout_args_before", a, b)[1]
    assert_same([ref_run("transform_layout_cache_before", a, b)[1]], [want])
    assert_same([ref_run("transform_layout_cache_after", a, b)[1]], [want])
    out = ref_run("transform_layout_args_after", pack(a, (4, 4), -1.0), pack(b, (4, 4), 3.0))
    assert_same([out[1]], [pack(want, (4, 4), -2.0)])


def test_explicit_default_producer_consumer_pipeline():
    junk = np.arange(16, dtype="int32") - 100
    expected = sum(1000 + i for i in range(14))
    (a,) = ref_run("explicit_default_step0", junk[:14], name="producer")
    assert ref_run("explicit_default_step0", a, np.zeros(1, "int32"), name="consumer")[1][0] \
        == expected
    for k in range(1, 6):
        stem = f"explicit_default_step{k}"
        (a,) = ref_run(stem, junk.reshape(4, 4), name="producer")
        np.testing.assert_array_equal(a, pack(1000 + np.arange(14, dtype="int32"), (4, 4), 0))
        b = ref_run(stem, a, np.zeros(1, "int32"), name="consumer")[1]
        assert b[0] == expected, stem


def _implicit_inputs(rng):
    a = rng.standard_normal(16).astype("float32")
    f = rng.standard_normal(3).astype("float32")
    b = rng.standard_normal(18).astype("float32")
    return a, f, b, pack(a, (3, 8), 0.0, offset=2), pack(b, (3, 8), 9.0, offset=2)


def test_implicit_default_transforms_agree_with_the_original():
    a, f, b, a_t, b_t = _implicit_inputs(np.random.default_rng(6))
    want = ref_run("implicit_default_step0", a, f, b)[2]
    assert_same([ref_run("implicit_default_step1", a_t, f, b)[2]], [want])
    # pad_value=0 on B: its padding is written with zeros.
    assert_same([ref_run("implicit_default_step2", a_t, f, b_t)[2]], [pack(want, (3, 8), 0.0, 2)])


def test_implicit_default_later_steps_agree_with_each_other():
    a, f, b, a_t, b_t = _implicit_inputs(np.random.default_rng(7))
    want = ref_run("implicit_default_step3", a_t, f, b_t)[2]
    for k in range(4, 13):
        assert_same([ref_run(f"implicit_default_step{k}", a_t, f, b_t)[2]], [want])
    # The RFC's off-by-two index (see implicit_default_step3.py): step 3 is a different
    # convolution from step 2.
    step2 = ref_run("implicit_default_step2", a_t, f, b_t)[2]
    assert not np.allclose(step2, want)


def test_elementwise_and_multiple_semantics_keep_logical_values():
    rng = np.random.default_rng(8)
    a = rng.integers(-50, 50, 14).astype("int32")
    junk = rng.integers(-50, 50, 16).astype("int32")
    want = 2 * a
    np.testing.assert_array_equal(ref_run("elementwise_before", a, a * 0)[1], want)
    np.testing.assert_array_equal(ref_run("elementwise_transform_a", pack(a, (4, 4), junk),
                                          a * 0)[1], want)
    for stem in ("transform_b", "sequential", "overcompute", "lowered"):
        out = ref_run(f"elementwise_{stem}", pack(a, (4, 4), junk), junk.reshape(4, 4))[1]
        np.testing.assert_array_equal(unpack(out, 14), want, err_msg=stem)

    m = rng.integers(-50, 50, (14, 60)).astype("int32")
    b = np.zeros(14, "int32")
    np.testing.assert_array_equal(ref_run("multi_semantics_before", m, b)[1], m.sum(axis=1))
    rows = np.concatenate([m, rng.integers(-50, 50, (2, 60)).astype("int32")])  # undef rows
    m_i = rows.reshape(4, 4, 60)
    m_ij = np.pad(rows, ((0, 0), (0, 4))).reshape(4, 4, 8, 8)  # zeros along j
    assert_same([ref_run("multi_semantics_transform_i", m_i, b)[1]], [m.sum(axis=1)])
    assert_same([ref_run("multi_semantics_transform_j", m_ij, b)[1]], [m.sum(axis=1)])
    for stem in ("transform_b", "sequential", "overcompute", "lowered"):
        out = ref_run(f"multi_semantics_{stem}", m_ij, junk.reshape(4, 4))[1]
        np.testing.assert_array_equal(unpack(out, 14), m.sum(axis=1), err_msg=stem)


# Steps with one signature: the same (assumption-honouring) inputs give the same outputs.
SAME_SIGNATURE = [
    ("remove_noop_sum_before", "remove_noop_sum_after"),
    ("simplify_merge_identical_before", "simplify_merge_identical_after"),
    ("simplify_merge_complementary_before", "simplify_merge_complementary_after"),
    ("simplify_assume_scalar_before", "simplify_assume_scalar_after"),
    ("simplify_assume_buffer_before", "simplify_assume_buffer_after"),
    ("reduce_extents_before", "reduce_extents_hoisted"),
    ("reduce_extents_before", "reduce_extents_after"),
    ("merge_loops_elementwise_before", "merge_loops_elementwise_after"),
    ("merge_loops_shifted_before", "merge_loops_shifted_after"),
    ("internal_buffer_before", "internal_buffer_cache_read"),
    ("internal_buffer_before", "internal_buffer_transformed"),
    ("internal_buffer_before", "internal_buffer_sequential"),
    ("internal_buffer_before", "internal_buffer_overcompute"),
    ("single_func_step0", "single_func_step1"),
    ("single_func_step0", "single_func_step2"),
]


@pytest.mark.parametrize(("before", "after"), SAME_SIGNATURE, ids=[a for _, a in SAME_SIGNATURE])
def test_same_signature_steps_agree(before, after):
    rng = np.random.default_rng(9)
    for _ in range(3):
        args = make_inputs(func(before), rng)
        assert_same(ref_run(after, *args), ref_run(before, *args))


def test_illegal_merges_change_results():
    a = np.array([-0.5] * 16, "float32")
    b = np.zeros(16, "float32")
    np.testing.assert_array_equal(ref_run("simplify_data_dependent_before", a, b)[0], 0.5)
    np.testing.assert_array_equal(ref_run("simplify_data_dependent_incorrect", a, b)[0], 0.0)
    (stencil,) = ref_run("merge_loops_stencil_before", np.zeros(16, "float32"))
    # A[i] = A[i - 1] + A[i] + A[i + 1] runs in order, reading the updated A[i - 1].
    expected = np.arange(16, dtype="float32")
    for i in range(1, 15):
        expected[i] = expected[i - 1] + expected[i] + expected[i + 1]
    np.testing.assert_array_equal(stencil, expected)


@pytest.mark.parametrize(
    ("producer", "consumer", "correct"),
    [
        ("split_module_before", "split_module_before", True),
        ("split_module_invalid", "split_module_invalid", True),
        ("split_module_before", "split_module_invalid", False),
        ("split_module_undef_before", "split_module_undef_before", True),
        ("split_module_undef_after", "split_module_undef_after", True),
        ("split_module_known_before", "split_module_known_before", True),
        ("split_module_known_after", "split_module_known_after", True),
        ("split_module_known_before", "split_module_known_after", True),
    ],
)
def test_split_module_pipelines(producer, consumer, correct):
    rng = np.random.default_rng(10)
    a = rng.integers(-50, 50, 14).astype("int32")
    junk = np.full((4, 4), 1000, "int32")  # an uninitialised B
    (_, b) = ref_run(producer, a, junk, name="transform_A")
    (_, c) = ref_run(consumer, b, np.zeros(1, "int32"), name="compute_C")
    assert bool(c[0] == a.sum()) is correct
