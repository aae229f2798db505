"""A vectorized loop of a few vectors is emitted as loops of two vectors each
(codegen/numba/lane_chunks.py), so that LLVM unrolls each whole and a register
tile 64 lanes wide stays in registers."""

from __future__ import annotations

import functools
import platform
import re
import sys
from pathlib import Path

import pytest
from test_emit_vectors import _parallel_body_asm, _same_as_matmul

import codegen
from codegen.numba.lane_chunks import lane_chunks
from polypad.ir import nodes as ir
from polypad.ir.nodes import ForKind

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from zoo_kernels import matmul, matmul_schedule  # noqa: E402

X86 = platform.machine() in ("x86_64", "AMD64")


@functools.cache
def matmul_4x64(n: int):
    """The zoo's matmul recipe with 4 x 64 tiles: each row of the tile 64 lanes, B's
    panel of 128 columns packed (scheduled once per size: both tests read it)."""
    return matmul_schedule(matmul(n), tile_i=4, tile_j=64, panel=128).func


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
    asm, compiled = _parallel_body_asm(func, tmp_path, monkeypatch)
    assert not re.search(r"vfmadd\d+ss", asm)
    assert len(re.findall(r"vfmadd\d+ps", asm)) >= 16
    _same_as_matmul(compiled, func)


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
