"""Finding blocks, loops and buffers by name, and replacing nodes by identity."""

from __future__ import annotations

import pytest

from polypad.errors import NotFoundError
from polypad.ir import nodes as ir
from polypad.ir.locate import (
    ancestors,
    enclosing_loops,
    find_block,
    find_buffer,
    find_loop,
    replace,
)
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse

TEXT = '''
@T.prim_func
def func(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    C = T.alloc_buffer((4,), "float32")
    for i in T.serial(4):
        with T.block("first"):
            for j in T.serial(4):
                B[i, j] = A[i, j]
    for i in T.serial(4):
        with T.block("second"):
            C[i] = B[i, 0]
'''


@pytest.fixture(scope="module")
def func() -> ir.PrimFunc:
    return parse(TEXT)


def test_find_block_by_name(func):
    block = find_block(func, "second")
    assert isinstance(block, ir.Block) and block.name == "second"
    assert isinstance(block.body, ir.BufferStore)


def test_missing_block_lists_the_blocks(func):
    with pytest.raises(NotFoundError, match="no block 'third'.*'first', 'second'"):
        find_block(func, "third")


def test_loop_by_unique_name_and_ambiguity(func):
    assert find_loop(func, "j").var.name == "j"
    with pytest.raises(NotFoundError, match="2 loops run over a variable called 'i'"):
        find_loop(func, "i")


def test_loop_by_node_must_belong_to_the_function(func):
    loop = find_loop(func, "j")
    assert find_loop(func, loop) is loop
    other = parse(TEXT)
    with pytest.raises(NotFoundError, match="loop over j is not in function func"):
        find_loop(other, loop)


def test_buffers_are_params_and_allocations(func):
    assert find_buffer(func, "A") is func.params[0]
    assert find_buffer(func, "C").shape == (4,)
    with pytest.raises(NotFoundError, match="no buffer 'D'.*A, B, C"):
        find_buffer(func, "D")


def test_ancestors_and_enclosing_loops(func):
    block = find_block(func, "first")
    store = block.body.body
    path = ancestors(func, store)
    assert path[-1] is store and path[-2] is block.body
    assert [loop.var.name for loop in enclosing_loops(func, store)] == ["i", "j"]


def test_replace_by_identity_keeps_the_rest(func):
    block = find_block(func, "second")
    renamed = ir.Block("renamed", block.body)
    out = replace(func, block, renamed)
    assert find_block(out, "renamed").body is block.body
    assert find_block(out, "first") is find_block(func, "first")  # shared, not copied
    expected = parse(TEXT.replace('"second"', '"renamed"'))
    assert_structural_equal(out, expected)


def test_replace_refuses_a_foreign_node(func):
    stranger = find_block(parse(TEXT), "first")
    with pytest.raises(NotFoundError, match="node to replace is not in function func"):
        replace(func, stranger, stranger)
