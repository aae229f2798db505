"""``vectorize`` around and along reductions.

A loop around a reduction (max-pool's channels ``c`` around its window) vectorizes:
each lane reduces its own element, and the lanes go below the window loops
(:mod:`polypad.semantics.vector_lanes`), as the Numba kernel shows.  A loop along an
*exact* reduction (integers; ``min``/``max``) vectorizes too: its updates may swap.
A float sum still needs ``rfactor``, and every refusal says which primitive would make
the step legal.  Each is checked by the script it prints, by the kernel's source, and
by running it against the original (reference executor and Numba, bit for bit).
"""

from __future__ import annotations

import numpy as np
import pytest
from kind_support import check_schedule, inputs

import codegen
from analyses import Element, Instance
from polypad.errors import IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.locate import find_loop, replace
from polypad.ir.structural import assert_structural_equal
from polypad.schedule import Schedule
from polypad.script import parse
from polypad.semantics.vector_lanes import lanes_innermost

POOL = '''
@T.prim_func
def pool(A: T.Buffer((1, 8, 8, 16), "float32"), P: T.Buffer((1, 4, 4, 16), "float32")):
    for n, h, w, c, rh, rw in T.grid(1, 4, 4, 16, 2, 2):
        with T.block("pool"):
            vn, vh, vw, vc, vrh, vrw = T.axis.remap("SSSSRR", [n, h, w, c, rh, rw])
            with T.init():
                P[vn, vh, vw, vc] = T.float32(-3.4e38)
            P[vn, vh, vw, vc] = T.max(P[vn, vh, vw, vc], A[vn, vh * 2 + vrh, vw * 2 + vrw, vc])
'''

DOT = '''
@T.prim_func
def dot(A: T.Buffer((64,), "int8"), B: T.Buffer((64,), "int8"), C: T.Buffer((1,), "int32")):
    for k in T.serial(64):
        with T.block("dot"):
            vk = T.axis.reduce(64, k)
            with T.init():
                C[0] = 0
            C[0] = C[0] + T.int32(A[vk]) * T.int32(B[vk])
'''


def same_bits(original: n.PrimFunc, scheduled: n.PrimFunc) -> None:
    want = inputs(original)
    codegen.build(original, target="python")(*want)
    for target in ("python", "numba"):
        got = inputs(original)
        codegen.build(scheduled, target=target, fastmath=None)(*got)
        for w, g in zip(want, got, strict=True):
            np.testing.assert_array_equal(g, w)


def test_the_lanes_go_below_the_loops_inside_and_stop_at_what_uses_them():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 8, 4), "float32"), P: T.Buffer((4, 4, 4), "float32")):
    for h, w in T.grid(4, 4):
        for c in T.vectorized(4):
            P[h, w, c] = T.float32(-3.4e38)
            for rh, rw in T.grid(2, 2):
                if c < 3:
                    P[h, w, c] = T.max(P[h, w, c], A[h * 2 + rh, w * 2 + rw, c])
            for k in T.serial(c + 1):
                P[h, w, c] = P[h, w, c] + A[h, w, k]
''')
    loop = find_loop(f, "c")
    lanes, stuck = lanes_innermost(loop)
    assert_structural_equal(replace(f, loop, lanes), parse('''
@T.prim_func
def f(A: T.Buffer((8, 8, 4), "float32"), P: T.Buffer((4, 4, 4), "float32")):
    for h, w in T.grid(4, 4):
        for c in T.vectorized(4):
            P[h, w, c] = T.float32(-3.4e38)
        for rh, rw in T.grid(2, 2):
            for c in T.vectorized(4):
                if c < 3:
                    P[h, w, c] = T.max(P[h, w, c], A[h * 2 + rh, w * 2 + rw, c])
        for c in T.vectorized(4):
            for k in T.serial(c + 1):
                P[h, w, c] = P[h, w, c] + A[h, w, k]
'''))
    # The loop over k uses c in its bounds: the lanes stay around it.
    assert [type(s) for s in stuck] == [n.For] and stuck[0].var.name == "k"
    # With no loop inside, the loop is itself.
    alone = find_loop(parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for c in T.vectorized(4):
        A[c] = A[c] * T.float32(2)
'''), "c")
    assert lanes_innermost(alone) == (alone, ())


def test_max_pool_vectorizes_over_the_channels_around_its_window():
    f = parse(POOL)
    sch = Schedule(f)
    sch.decompose_reduction("pool", "c")
    sch.vectorize("c")
    sch.vectorize("c_init")
    sch.parallel("h")
    check_schedule(f, sch, '''
@T.prim_func
def pool(A: T.Buffer((1, 8, 8, 16), "float32"), P: T.Buffer((1, 4, 4, 16), "float32")):
    for n in T.serial(1):
        for h in T.parallel(4):
            for w in T.serial(4):
                for c_init in T.vectorized(16):
                    P[n, h, w, c_init] = T.float32(-3.4e38)
                for c in T.vectorized(16):
                    for rh, rw in T.grid(2, 2):
                        with T.block("pool"):
                            vn, vh, vw, vc, vrh, vrw = T.axis.remap(
                                "SSSSRR", [n, h, w, c, rh, rw])
                            P[vn, vh, vw, vc] = T.max(P[vn, vh, vw, vc],
                                                      A[vn, vh * 2 + vrh, vw * 2 + vrw, vc])
''')
    # In the kernel the channels are the innermost loop, inside the window.
    source = codegen.build(sch.func, fastmath=None).source
    lines = [line.strip() for line in source.splitlines()]
    assert lines.index("for rw in range(2):") < lines.index("for c in range(16):")
    same_bits(f, sch.func)
    # Without the init moved out, c still carries nothing: the T.init runs per lane.
    plain = Schedule(f)
    plain.vectorize("c")
    same_bits(f, plain.func)


def test_an_integer_reduction_vectorizes_along_its_axis_without_rfactor():
    f = parse(DOT)
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError,
                       match=r"sch.decompose_reduction\('dot', 'k'\) moves it out first") as info:
        sch.vectorize("k")  # the T.init inside k writes C[0] at k == 0
    assert info.value.evidence.instances == (Instance("dot_0", {"k": 0}),
                                             Instance("dot_1", {"k": 1}))
    assert sch.decompose_reduction("dot", "k") == []
    sch.vectorize("k")
    same_bits(f, sch.func)
    # In parallel the updates would race: rfactor is what makes that legal.
    with pytest.raises(IllegalTransformError, match=r"sch.rfactor\('k'\)") as info:
        sch.parallel("k")
    assert info.value.evidence.element == Element("C", (0,))


def test_a_float_sum_along_the_loop_is_refused_with_rfactor_suggested():
    f = parse('''
@T.prim_func
def f(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        B[i] = B[i] + A[i, k]
''')
    sch = Schedule(f)
    with pytest.raises(IllegalTransformError, match=r"only the reduction into B \(\+\) makes "
                                                    r"k carry it: sch.rfactor\('k'\)") as info:
        sch.vectorize("k")
    assert info.value.evidence.instances == (Instance("S0", {"i": 0, "k": 0}),
                                             Instance("S0", {"i": 0, "k": 1}))
    # A float max too: it keeps the first of two equal terms, so in lanes a zero's sign
    # would depend on the order.  An integer max is exact: it vectorizes as it is.
    g = parse('''
@T.prim_func
def f(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        B[i] = T.max(B[i], A[i, k])
''')
    sch = Schedule(g)
    with pytest.raises(IllegalTransformError, match=r"only the reduction into B \(max\) "
                                                    r"makes k carry it: sch.rfactor\('k'\)"):
        sch.vectorize("k")
    ints = parse('''
@T.prim_func
def f(A: T.Buffer((8, 16), "int32"), B: T.Buffer((8,), "int32")):
    for i, k in T.grid(8, 16):
        B[i] = T.max(B[i], A[i, k])
''')
    sch = Schedule(ints)
    sch.vectorize("k")
    same_bits(ints, sch.func)
