"""Printing blocks from their header, in TVM 0.27's spelling and the older one, and the
header derived for a block that declares nothing."""

from __future__ import annotations

import numpy as np
from tvmscript_support import arguments, roundtrip, run_both

from polypad.errors import ArgumentValueError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal, structural_equal
from polypad.ir.visitor import walk
from polypad.schedule import Schedule
from polypad.script import parse, script

# Every part a header has, in TVM 0.27's spelling.
FULL = """\
@T.prim_func(s_tir=True)
def f(A: T.Buffer((16, 8), "float32"), B: T.Buffer((14,), "float32")):
    X = T.sblock_alloc_buffer((14,), "float32")
    for io in T.serial(4):
        for ii in T.serial(4):
            for k in T.serial(2, 8):
                with T.sblock("B"):
                    vi = T.axis.spatial(16, io * 4 + ii)
                    vk = T.axis.remap("R", [k])
                    T.where(io * 4 + ii < 14)
                    T.reads(A[vi, vk])
                    T.writes(X[vi])
                    T.sblock_attr({"tag": "sum", "sizes": [4, 4]})
                    t = T.sblock_alloc_buffer((1,), "float32", scope="local")
                    with T.init():
                        X[vi] = 0.0
                    t[0] = A[vi, vk]
                    X[vi] = X[vi] + t[0]
    for i in T.serial(14):
        with T.sblock("copy"):
            vi = T.axis.remap("S", [i])
            B[vi] = X[vi]
"""


def test_every_part_of_a_header_prints_as_tvm_0_27_writes_it():
    f = roundtrip(FULL)
    assert script(f) == FULL
    args = arguments(f, seed=3)
    out = run_both(f, args, rtol=1e-6)
    np.testing.assert_allclose(out[1], args[0][:14, 2:].sum(axis=1), rtol=1e-5)


def test_the_older_spelling_reads_back_the_same():
    f = parse(FULL)
    older = script(f, spelling="tir")
    assert older == (FULL.replace("@T.prim_func(s_tir=True)", "@T.prim_func")
                     .replace("T.sblock_alloc_buffer", "T.alloc_buffer")
                     .replace("T.sblock_attr", "T.block_attr").replace("T.sblock(", "T.block("))
    assert_structural_equal(parse(older), f)


def test_a_spelling_is_one_of_two():
    try:
        script(parse(FULL), spelling="tvm")
    except ArgumentValueError as err:
        assert "'tirx'" in str(err) and "'tir'" in str(err)
    else:
        raise AssertionError("spelling='tvm' was accepted")


def test_what_no_longer_fits_prints_as_the_lowered_statement():
    f = parse(FULL)
    sch = Schedule(f)
    sch.cache_read("B", "A", "global")  # the block now reads A_cache: its T.reads goes
    text = script(sch.func)
    assert "T.reads(" not in text.split('T.sblock("B")')[1].split("T.sblock(")[0]
    assert "T.writes(X[vi])" in text and "T.where(io * 4 + ii < 14)" in text
    assert_structural_equal(parse(text), sch.func)


LOWERED = """
@T.prim_func
def f(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
    for io in T.serial(4):
        for ii in T.serial(4):
            for k in T.serial(2, 8):
                with T.block("B"):
                    vi = io * 4 + ii
                    vk = k
                    if vk == 2:
                        B[vi] = 0.0
                    B[vi] = B[vi] + A[vi, vk]
    for j in T.serial(n):
        with T.block("C"):
            vj = j % 16
            t = A[vj, 0]
            B[vj] = t
"""


def test_a_block_that_declares_nothing_gets_the_header_tvm_needs():
    f = roundtrip(LOWERED)
    blocks = {b.name: b.header for b in walk(f.body) if isinstance(b, n.Block)}
    b, c = blocks["B"], blocks["C"]
    assert [(a.var.name, a.kind, a.min.value, a.extent.value) for a in b.axes] == [
        ("vi", "S", 0, 16), ("vk", "R", 2, 6)]
    assert b.init and not b.where and b.reads is None and b.writes is None
    assert [(a.var.name, a.kind, a.extent.value) for a in c.axes] == [("vj", "S", 16)]
    assert not c.init  # the let after the axis is a let of the body
    text = script(f)
    lines = [line.strip() for line in text.splitlines()]
    start = lines.index('with T.sblock("B"):')
    assert lines[start:start + 6] == [
        'with T.sblock("B"):', "vi = T.axis.spatial(16, io * 4 + ii)",
        'vk = T.axis.remap("R", [k])', "with T.init():", "B[vi] = 0.0",
        "B[vi] = B[vi] + A[vi, vk]"]
    assert "vj = T.axis.spatial(16, j % 16)" in text
    assert "t: T.let[T.float32] = A[vj, 0]" in text


def test_symbolic_loops_give_symbolic_domains():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((m,), "float32"), n: T.int32, m: T.int32):
            for io in T.serial(n):
                for ii in T.serial(4):
                    with T.block("B"):
                        vi = io * 4 + ii
                        A[vi] = 1.0
        """)
    (axis,) = next(b for b in walk(f.body) if isinstance(b, n.Block)).header.axes
    assert axis.min == n.IntImm(0)
    assert "vi = T.axis.spatial((n - 1) * 4 + 4, io * 4 + ii)" in script(f)


def test_a_block_a_primitive_makes_gets_its_header_when_installed():
    f = parse(LOWERED)
    sch = Schedule(f)
    io, ii, k = sch.get_loops("B")
    sch.fuse(io, ii)
    block = next(b for b in walk(sch.func.body) if isinstance(b, n.Block) and b.name == "B")
    assert block.header is not None and [a.kind for a in block.header.axes] == ["S", "R"]
    assert_structural_equal(parse(script(sch.func)), sch.func)
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)


def test_tvm_layout_keywords_of_a_buffer_print_back():
    text = """\
@T.prim_func(s_tir=True)
def f(A: T.Buffer((4,), "float32", offset_factor=1), B: T.Buffer((4,), "float32", align=64)):
    C = T.alloc_buffer((4,), "float32", buffer_type="")
    for i in T.serial(4):
        C[i] = A[i]
        B[i] = C[i]
"""
    f = roundtrip(text)
    assert script(f) == text
    assert f.params[0].tvm_attrs == (("offset_factor", 1),)
    plain = parse(text.replace(", offset_factor=1", ""))
    assert not structural_equal(plain, f)  # TVM's buffer differs: so does polypad's
    np.testing.assert_array_equal(*[run_both(g, arguments(g))[1] for g in (f, plain)])
