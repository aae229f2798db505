"""Loop names: unique variable names, ``block/var`` qualified names, ``var#k``."""

from __future__ import annotations

import pytest

import polypad as pp
from polypad.errors import NotFoundError
from polypad.ir import nodes as n
from polypad.ir.locate import find_loop
from polypad.ir.loop_names import find_named_loop, loop_name, loop_names

DISTRIBUTED = '''
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    with T.block("init"):
        for i in T.serial(8):
            for j in T.serial(4):
                B[i, j] = 0.0
    with T.block("C"):
        for i in T.serial(8):
            for j in T.serial(4):
                for k in T.serial(2):
                    B[i, j] = B[i, j] + A[i, j]
'''

PLAIN = '''
@T.prim_func
def g(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        A[i] = 1.0
    for i in T.serial(8):
        A[i] = A[i] + 1.0
    for i in T.serial(4):
        with T.block("tail"):
            A[i] = 0.0
'''


def test_unique_variables_keep_their_names_and_shared_ones_are_qualified():
    f = pp.parse(DISTRIBUTED)
    names = loop_names(f)
    assert list(names) == ["init/i", "init/j", "C/i", "C/j", "k"]
    assert all(isinstance(loop, n.For) for loop in names.values())
    assert names["C/j"].body is names["k"]


def test_a_loop_outside_blocks_is_named_by_the_block_inside_else_by_ordinal():
    g = pp.parse(PLAIN)
    assert list(loop_names(g)) == ["i#0", "i#1", "tail/i"]
    assert find_named_loop(g, "i#2") is loop_names(g)["tail/i"]  # ordinals always work


def test_names_round_trip_through_find_loop():
    for text in (DISTRIBUTED, PLAIN):
        func = pp.parse(text)
        for name, loop in loop_names(func).items():
            assert find_loop(func, name) is loop
            assert loop_name(func, loop) == name


def test_an_ambiguous_name_lists_the_candidates():
    f = pp.parse(DISTRIBUTED)
    with pytest.raises(NotFoundError, match=r"2 loops run over .*'i'.*'init/i', 'C/i'"):
        find_loop(f, "i")


def test_an_unknown_name_lists_every_loop():
    f = pp.parse(DISTRIBUTED)
    with pytest.raises(NotFoundError, match=r"no loop 'x'.*'init/i', 'init/j', 'C/i'"):
        find_loop(f, "x")
    with pytest.raises(NotFoundError, match="no loop 'i#5'"):
        find_loop(f, "i#5")


def test_a_loop_of_another_function_is_not_found():
    f, g = pp.parse(DISTRIBUTED), pp.parse(DISTRIBUTED)
    with pytest.raises(NotFoundError, match="loop over k is not in function f"):
        loop_name(g, loop_names(f)["k"])
