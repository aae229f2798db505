"""``transform_layout`` refusals: each with its exact error class and evidence."""

from __future__ import annotations

import pytest
from layout_support import load

from polypad import (
    IllegalTransformError,
    NonInjectiveError,
    NotAffineError,
    NotFoundError,
    PolypadError,
    Schedule,
    parse,
)
from polypad.layout import Collision

SPLIT4 = "lambda i: [i // 4, i % 4]"

SCRATCH = '''
@T.prim_func
def func(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
    X = T.alloc_buffer((14,), "float32")
    for i in T.serial(14):
        with T.block("compute"):
            B[i] = A[i] + X[i]
'''


def test_a_map_that_is_not_injective_names_two_colliding_indices():
    sch = Schedule(load("never_write_before"))
    with pytest.raises(NonInjectiveError, match="is not injective on shape") as err:
        sch.transform_layout(None, "A", lambda i: [i // 2])
    found = err.value.collision
    assert isinstance(found, Collision)
    assert found.first != found.second
    assert found.first[0] // 2 == found.second[0] // 2 == found.transformed[0]
    assert len(sch.trace) == 0  # a refused step is not recorded


def test_a_map_that_is_not_affine_names_the_expression():
    sch = Schedule(load("never_write_before"))
    with pytest.raises(NotAffineError) as err:
        sch.transform_layout(None, "A", lambda i: [i * i])
    assert "i * i" in str(err.value)


def test_a_map_of_the_wrong_rank_is_refused():
    with pytest.raises(PolypadError, match="index map takes 2 indices but the buffer has 1 axes"):
        Schedule(load("never_write_before")).transform_layout(None, "A", lambda i, j: [i, j])


def test_a_map_to_negative_indices_is_refused():
    with pytest.raises(PolypadError, match="to negative values on transformed axis 0"):
        Schedule(load("never_write_before")).transform_layout(None, "A", lambda i: [i - 1])


def test_unknown_buffer_and_block_are_not_found():
    sch = Schedule(load("transform_layout_args_before"))
    with pytest.raises(NotFoundError, match="no buffer 'C' in function func; buffers: A, B"):
        sch.transform_layout("compute", "C", SPLIT4)
    with pytest.raises(NotFoundError, match="no block 'comput' in function func; blocks: "
                                            "'compute'"):
        sch.transform_layout("comput", "A", SPLIT4)


def test_an_index_map_of_the_wrong_type_is_refused():
    with pytest.raises(PolypadError, match="index_map must be an IndexMap, a callable or "
                                           "lambda text, not int"):
        Schedule(load("never_write_before")).transform_layout(None, "A", 4)


def test_a_pad_value_for_a_scratch_buffer_nobody_writes_is_refused():
    sch = Schedule(parse(SCRATCH))
    with pytest.raises(IllegalTransformError,
                       match="pad_value for X: the buffer is allocated in func but never written"
                       ) as err:
        sch.transform_layout("compute", "X", SPLIT4, pad_value=0.0)
    assert err.value.evidence == "X"
    # Without a pad value there is nothing to write or assume: the layout changes.
    sch.transform_layout("compute", "X", SPLIT4)
    assert sch.func.body.buffer.shape == (4, 4)


def test_a_symbolic_shape_that_does_not_divide_is_refused():
    f = parse('''
@T.prim_func
def func(n: T.int32, A: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        A[i] = 1.0
''')
    with pytest.raises(PolypadError, match="gives buffer A the extent .* which is not a "
                                           "constant or a parameter"):
        Schedule(f).transform_layout(None, "A", SPLIT4)
    sch = Schedule(f)
    sch.transform_layout(None, "A", lambda i: [0, i])
    assert sch.func.params[1].shape == (1, f.params[0])
