"""``cache_read`` / ``cache_write``: the RFC 0077 cache examples, placement, refusals."""

from __future__ import annotations

import functools

import pytest
from layout_support import check_layouts, load, strip_blocks

from analyses.evidence import Counterexample, Element, Instance
from polypad import IllegalTransformError, NotFoundError, Schedule, parse
from polypad.ir.structural import assert_structural_equal

SPLIT4 = "lambda i: [i // 4, i % 4]"


# ------------------------------------------------------------ RFC: cache, then transform


@functools.cache
def rfc_cache():
    sch = Schedule(load("transform_layout_args_before"))
    names = (sch.cache_read("compute", "A"), sch.cache_write("compute", "B"))
    cached = sch.func
    sch.transform_layout("compute", "A_cache", lambda i: [i // 4, i % 4], pad_value=-1)
    sch.transform_layout("compute", "B_cache", lambda i: [i // 4, i % 4], pad_value=-2)
    return names, cached, sch.func


def test_cache_read_and_cache_write_give_the_rfc_caches():
    names, cached, _ = rfc_cache()
    assert names == ("A_cache", "B_cache")
    assert_structural_equal(cached, load("transform_layout_cache_before"))


def test_transforming_the_caches_gives_the_rfc_result():
    _, _, transformed = rfc_cache()
    assert_structural_equal(transformed, load("transform_layout_cache_after"))


@pytest.mark.numba
def test_cached_and_transformed_kernels_compute_the_same_values():
    _, cached, transformed = rfc_cache()
    original = load("transform_layout_args_before")
    check_layouts(original, cached, {})
    check_layouts(original, transformed, {})  # the interface did not change


def test_cache_write_of_the_whole_function_copies_out_at_the_end():
    sch = Schedule(load("transform_layout_args_before"))
    assert sch.cache_write(None, "B") == "B_cache"
    expected = Schedule(load("transform_layout_args_before"))
    expected.cache_write("compute", "B")
    assert_structural_equal(sch.func, expected.func)


# ------------------------------------------------------------ RFC: internal buffer

# RFC "Allocate internal buffer containing transformation padding", after
# transform_layout(A_local, pad_value=0).  The RFC writes this step's
# predicate as `io == 3 and ii >= 2` but `4 * io + ii >= 14` everywhere else
# (and in this example's next steps); the primitive writes the latter.
INTERNAL_AFTER = '''
@T.prim_func
def func(A: T.Buffer[(14,), "int32"], B: T.Buffer[(1,), "int32"]) -> None:
    A_local = T.alloc_buffer([4, 4], dtype="int32", scope="local")
    for i in T.serial(14):
        A_local[i // 4, i % 4] = A[i]
    for io, ii in T.grid(4, 4):
        if 4 * io + ii >= 14:
            A_local[io, ii] = 0
    B[0] = 0
    for i in T.serial(14):
        B[0] = B[0] + A_local[i // 4, i % 4]
'''


@functools.cache
def internal_buffer():
    sch = Schedule(load("internal_buffer_before"), preserve_interface=True)
    name = sch.cache_read(None, "A", "local")
    cached = sch.func
    sch.transform_layout(None, name, SPLIT4, pad_value=0)
    return name, cached, sch.func


def test_cache_read_with_a_scope_names_the_cache_after_it():
    name, cached, _ = internal_buffer()
    assert name == "A_local"
    assert cached.body.buffer.scope == "local"
    # The RFC's example has no blocks.
    assert_structural_equal(strip_blocks(cached, ["A_local"]), load("internal_buffer_cache_read"))


def test_internal_buffer_padding_is_written_after_the_copy():
    _, _, transformed = internal_buffer()
    assert_structural_equal(strip_blocks(transformed), parse(INTERNAL_AFTER))


@pytest.mark.numba
def test_internal_buffer_kernels_compute_the_same_values():
    _, cached, transformed = internal_buffer()
    check_layouts(load("internal_buffer_before"), cached, {})
    check_layouts(load("internal_buffer_before"), transformed, {})


# ------------------------------------------------------------ placement after a producer

PIPELINE = '''
@T.prim_func
def func(A: T.Buffer((14,), "float32"), C: T.Buffer((14,), "float32")):
    X = T.alloc_buffer((14,), "float32")
    for i in T.serial(14):
        with T.block("produce"):
            X[i] = 2.0 * A[i]
    for i in T.serial(14):
        with T.block("consume"):
            C[i] = X[i] + 1.0
'''

PIPELINE_CACHED = '''
@T.prim_func
def func(A: T.Buffer((14,), "float32"), C: T.Buffer((14,), "float32")):
    X = T.alloc_buffer((14,), "float32")
    for i in T.serial(14):
        with T.block("produce"):
            X[i] = 2.0 * A[i]
    X_cache = T.alloc_buffer((14,), "float32")
    for i in T.serial(14):
        with T.block("X_cache"):
            X_cache[i] = X[i]
    for i in T.serial(14):
        with T.block("consume"):
            C[i] = X_cache[i] + 1.0
'''


@pytest.mark.numba
def test_cache_read_of_a_produced_buffer_copies_right_before_the_reader():
    sch = Schedule(parse(PIPELINE))
    assert sch.cache_read("consume", "X") == "X_cache"
    assert_structural_equal(sch.func, parse(PIPELINE_CACHED))
    check_layouts(parse(PIPELINE), sch.func, {})


# ------------------------------------------------------------ refusals

SUM = '''
@T.prim_func
def func(A: T.Buffer((14,), "int32"), B: T.Buffer((1,), "int32")):
    with T.block("sum"):
        B[0] = 0
        for i in T.serial(14):
            B[0] = B[0] + A[i]
'''

FUSED = '''
@T.prim_func
def func(A: T.Buffer((14,), "float32"), C: T.Buffer((14,), "float32")):
    X = T.alloc_buffer((14,), "float32")
    for i in T.serial(14):
        with T.block("produce"):
            X[i] = A[i]
        with T.block("consume"):
            C[i] = X[i]
'''


@pytest.mark.parametrize("text, primitive, args, error, message", [
    (SUM, "cache_read", ("sum", "B"), IllegalTransformError,
     "cache_read of B for block 'sum': the block also writes B"),
    (FUSED, "cache_read", ("consume", "X"), IllegalTransformError,
     "the stage around the block also writes X"),
    (PIPELINE, "cache_read", (None, "X"), IllegalTransformError,
     "func also writes X, so one copy cannot serve every read"),
    (FUSED, "cache_write", ("produce", "X"), IllegalTransformError,
     "the stage around the block also accesses X outside the block"),
    (PIPELINE, "cache_write", ("consume", "X"), NotFoundError,
     "block 'consume' does not write buffer X"),
])
def test_cache_refusals_name_what_is_wrong(text, primitive, args, error, message):
    sch = Schedule(parse(text))
    with pytest.raises(error, match=message):
        getattr(sch, primitive)(*args)
    assert len(sch.trace) == 0
    assert_structural_equal(sch.func, parse(text))


def test_cache_read_needs_a_block_that_reads_the_buffer_and_a_free_name():
    sch = Schedule(parse(PIPELINE))
    with pytest.raises(NotFoundError, match="block 'produce' does not read buffer C"):
        sch.cache_read("produce", "C")
    with pytest.raises(IllegalTransformError, match="a buffer called 'A' already exists in func"):
        sch.cache_read("consume", "X", name="A")
    assert len(sch.trace) == 0


# ------------------------------------------------------------ cache_write

SUM_CACHED = '''
@T.prim_func
def func(A: T.Buffer((14,), "int32"), B: T.Buffer((1,), "int32")):
    B_cache = T.alloc_buffer((1,), "int32")
    with T.block("sum"):
        B_cache[0] = 0
        for i in T.serial(14):
            B_cache[0] = B_cache[0] + A[i]
    for i in T.serial(1):
        with T.block("B_cache"):
            B[i] = B_cache[i]
'''


@pytest.mark.numba
def test_cache_write_of_a_reduction_that_initialises_its_output():
    sch = Schedule(parse(SUM))
    assert sch.cache_write("sum", "B") == "B_cache"
    assert_structural_equal(sch.func, parse(SUM_CACHED))
    check_layouts(parse(SUM), sch.func, {})


def test_cache_write_refuses_a_block_that_writes_part_of_the_buffer():
    f = parse('''
@T.prim_func
def func(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
    for i in T.serial(7):
        with T.block("half"):
            B[i] = A[i]
''')
    with pytest.raises(IllegalTransformError, match=r"cache_write of B for block 'half': the "
                                                    r"block does not write B\[\d+\]") as err:
        Schedule(f).cache_write("half", "B")
    evidence = err.value.evidence
    assert isinstance(evidence, Counterexample)
    assert evidence.element.buffer == "B" and 7 <= evidence.element.indices[0] < 14


def test_cache_write_refuses_a_block_that_reads_a_value_from_before_it():
    f = parse('''
@T.prim_func
def func(A: T.Buffer((14,), "int32"), B: T.Buffer((1,), "int32")):
    B[0] = 0
    for i in T.serial(14):
        with T.block("acc"):
            B[0] = B[0] + A[i]
''')
    with pytest.raises(IllegalTransformError, match=r"acc\(i=0\) reads B\[0\], which S0\(\) "
                                                    "writes outside the block before it") as err:
        Schedule(f).cache_write("acc", "B")
    evidence = err.value.evidence
    assert evidence.instances == (Instance("S0", {}), Instance("acc", {"i": 0}))
    assert evidence.element == Element("B", (0,))


def test_cache_write_refuses_a_block_that_reads_the_input_value():
    f = parse('''
@T.prim_func
def func(A: T.Buffer((14,), "int32"), B: T.Buffer((1,), "int32")):
    for i in T.serial(14):
        with T.block("acc"):
            B[0] = B[0] + A[i]
''')
    with pytest.raises(IllegalTransformError, match=r"acc\(i=0\) reads B\[0\] before the block "
                                                    "writes it") as err:
        Schedule(f).cache_write("acc", "B")
    evidence = err.value.evidence
    assert evidence.instances == (Instance("acc", {"i": 0}),)
    assert evidence.element == Element("B", (0,))


def test_cache_write_refuses_a_read_that_a_data_dependent_write_may_not_source():
    # b_1 reads B[i] after a write under a data-dependent guard: when A[i] <= 0 it
    # reads the input value, which the cache does not hold.
    f = parse('''
@T.prim_func
def func(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")):
    with T.block("b"):
        for i in T.serial(4):
            if A[i] > 0:
                B[i] = A[i]
            C[i] = B[i]
            B[i] = 1
''')
    with pytest.raises(IllegalTransformError, match=r"b_1\(i=0\) reads B\[0\] before") as err:
        Schedule(f).cache_write("b", "B")
    assert err.value.evidence.instances == (Instance("b_1", {"i": 0}),)


def test_cache_write_counts_a_data_dependent_write_as_may():
    f = parse('''
@T.prim_func
def func(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        with T.block("relu"):
            if A[i] > 0.0:
                B[i] = A[i]
''')
    with pytest.raises(IllegalTransformError, match="the block does not write B") as err:
        Schedule(f).cache_write("relu", "B")
    assert "never (surely) writes B[" in err.value.evidence.description
