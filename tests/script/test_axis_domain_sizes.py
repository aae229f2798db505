"""The block axis check knows a parameter buffer's symbolic size is never negative, and
the assumptions before the block.

A partition's tail binds ``vj`` to ``j_1_tail + n // 8 * 8``, inside ``[0, n)``
for every ``n >= 0``; for a negative ``n`` the tail's ``n % 8`` would run it
outside.  Where ``n`` is the size of an argument's array it cannot be negative,
and the script reads; where it is any scalar, the check refuses with the instance.
"""

from __future__ import annotations

import pytest

from polypad.errors import ParseError
from polypad.script import parse

TAIL = '''
@T.prim_func
def f({params}):
    for i in T.serial(4):
        for j_1_tail in T.serial(n % 8):
            with T.block("c"):
                vi = T.axis.spatial(4, i)
                vj = T.axis.spatial(n, j_1_tail + n // 8 * 8)
                B[vi, vj] = 1
'''


def test_a_size_of_a_parameter_buffer_is_not_negative():
    f = parse(TAIL.format(params='A: T.Buffer(("n",), "int32"), B: T.Buffer((4, 64), "int32")'))
    assert [p.name for p in f.params] == ["A", "B", "n"]


def test_a_scalar_that_sizes_no_buffer_may_be_negative():
    with pytest.raises(ParseError, match=r"binds vj to -2147483648 at i = 0, j_1_tail = 0, "
                                         r"n = -2147483647, outside its domain \[0, n\)"):
        parse(TAIL.format(params='n: T.int32, B: T.Buffer((4, 64), "int32")'))


def test_an_assumption_before_the_block_counts():
    # T.assume(0 <= n) is a fact at the block: the tail runs nothing for a negative n.
    text = TAIL.format(params='n: T.int32, B: T.Buffer((4, 64), "int32")').replace(
        "    for i in T.serial(4):", "    T.assume(0 <= n)\n    for i in T.serial(4):")
    f = parse(text)
    assert [p.name for p in f.params] == ["n", "B"]
    # An assumption that reads a buffer is not a fact about n: the block is refused.
    with pytest.raises(ParseError, match=r"binds vj to -2147483648 at i = 0, j_1_tail = 0, "
                                         r"n = -2147483647"):
        parse(text.replace("n: T.int32, B:", "n: T.int32, C: T.Buffer((1,), \"int32\"), B:")
              .replace("T.assume(0 <= n)", "T.assume(C[0] <= n)"))
