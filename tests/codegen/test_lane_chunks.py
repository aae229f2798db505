"""A vectorized loop of a few vectors is emitted as loops of two vectors each
(codegen/numba/lane_chunks.py), so that LLVM unrolls each whole and a register
tile 64 lanes wide stays in registers."""

from __future__ import annotations

import platform
import re

import pytest
from test_emit_vectors import _parallel_body_asm, _same_as_matmul

import codegen
import polypad as pp
from codegen.numba.lane_chunks import lane_chunks
from polypad.ir import nodes as ir
from polypad.ir.nodes import ForKind

X86 = platform.machine() in ("x86_64", "AMD64")


def matmul_4x64(n: int):
    """The zoo's matmul recipe with 4 x 64 tiles: each row of the tile 64 lanes, B's
    panel of 128 columns packed."""
    f = pp.parse(f'''
@T.prim_func
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''')
    sch = pp.Schedule(f)
    i, j, k = sch.get_loops("C")
    i_0, i_1 = sch.split(i, [None, 4])
    j_0, j_1, j_2 = sch.split(j, [None, 2, 64])
    sch.reorder(j_0, i_0, j_1, k, i_1, j_2)
    tile = sch.cache_write("C", "C", "local", at=j_1)
    init = sch.decompose_reduction("C", k)
    panel = sch.cache_read("C", "B", "local", at=j_0)
    sch.parallel(j_0)
    sch.unroll(i_1)
    sch.vectorize(j_2)
    sch.vectorize(init[-1])
    for copy in (panel, tile):
        sch.vectorize(sch.get_loops(copy)[-1])
    return sch.func


def test_a_64_lane_row_of_a_tile_is_two_loops_of_32():
    source = codegen.build(matmul_4x64(256)).source
    assert source.count("for j_2 in range(0, 32):") == 4      # one per unrolled row
    assert source.count("for j_2 in range(32, 64):") == 4
    assert "range(64)" not in source.split("for k in range(256):")[1].split("# block")[0]


@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_the_4x64_register_tile_runs_as_packed_fmas(tmp_path, monkeypatch):
    # As one 64-lane loop, LLVM's loop vectorizer kept the tile in memory and left
    # 208 scalar multiply-adds beside 16 packed ones (28 ms against 8.8 on one core).
    func = matmul_4x64(256)
    asm = _parallel_body_asm(func, tmp_path, monkeypatch)
    assert not re.search(r"vfmadd\d+ss", asm)
    assert len(re.findall(r"vfmadd\d+ps", asm)) >= 16
    _same_as_matmul(codegen.build(func), func)


def _vector_loop(extent: int, dtype: str, start: int = 0) -> ir.For:
    a = ir.Buffer("A", (start + extent,), dtype)
    i = ir.Var("i", "int32")
    store = ir.BufferStore(a, ir.BufferLoad(a, (i,)), (i,))
    return ir.For(i, ir.IntImm(start, "int32"), ir.IntImm(extent, "int32"),
                  ForKind.VECTORIZED, store)


@pytest.mark.parametrize(("extent", "dtype", "start", "chunks"), [
    (64, "float32", 0, [(0, 32), (32, 64)]),
    (40, "float32", 8, [(8, 40), (40, 48)]),           # a shorter last chunk
    (256, "int8", 0, [(0, 128), (128, 256)]),           # 128 lanes of int8 per chunk
    (32, "float32", 0, None),                           # one chunk: as it was
    (512, "float32", 0, None),                          # a long loop stays a loop
    (64, "float64", 0, [(0, 16), (16, 32), (32, 48), (48, 64)]),
])
def test_chunks_are_two_vectors_of_the_narrowest_element(extent, dtype, start, chunks):
    assert lane_chunks(_vector_loop(extent, dtype, start)) == chunks
