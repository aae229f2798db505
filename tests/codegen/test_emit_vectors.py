"""What the Numba emitter makes of vectorized loops and parallel kernels (issue 24,
"emission that never loses"): the emitted source, the machine code LLVM makes of
it, and the results against the reference executor.

- A vectorized loop along an exact reduction's axis (the int8 dot's lanes into
  ``C_rf[k_0]``) holds the element in a local (codegen/numba/accumulators.py),
  which LLVM vectorizes with ``pmaddwd``.
- A kernel with a vectorized loop is compiled with LLVM's SLP vectorizer
  (codegen/numba/slp.py): rfactor's 16 lanes become packed adds, not 16 scalar
  ones.
- In a parallel loop's body, an index computed from its counter and never
  negative is written unsigned (codegen/numba/pyexpr.py): LLVM then
  vectorizes a 1-D loop with plain loads, not gathers.
- OpenMP's idle workers sleep (codegen/numba/threads.py).

The machine-code tests compile in a kernel cache of their own (Numba does not
show the code of a kernel it loaded from its cache) and look for instruction
names that every x86-64 CPU has (``pmaddwd``, ``addps``, with or without
AVX's ``v``).
"""

from __future__ import annotations

import functools
import os
import platform
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core import config

import codegen
import polypad as pp
from codegen.numba import lane_rotation, slp, threads
from codegen.numba.compiler import compile_kernel
from codegen.numba.vector_width import cpu_has_avx512

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from zoo_kernels import matmul, matmul_schedule  # noqa: E402

X86 = platform.machine() in ("x86_64", "AMD64")


def dot(n: int):
    return pp.parse(f'''
@T.prim_func
def dot(A: T.Buffer(({n},), "int8"), B: T.Buffer(({n},), "int8"), C: T.Buffer((1,), "int32")):
    for k in T.serial({n}):
        with T.block("dot"):
            vk = T.axis.reduce({n}, k)
            with T.init():
                C[0] = 0
            C[0] = C[0] + T.int32(A[vk]) * T.int32(B[vk])
''')


def dot_schedule(f, chunks: int):
    sch = pp.Schedule(f)
    (k,) = sch.get_loops("dot")
    chunk, lane = sch.split(k, [chunks, None])
    sch.rfactor(chunk)
    sch.parallel(chunk)
    sch.vectorize(lane)
    return sch.func


def lanes_row_sum(rows: int, cols: int):
    """A row sum in 16 partial sums (rfactor), serial: the lanes loop alone."""
    f = pp.parse(f'''
@T.prim_func
def row_sum(A: T.Buffer(({rows}, {cols}), "float32"), B: T.Buffer(({rows},), "float32")):
    for i in T.serial({rows}):
        B[i] = T.float32(0)
        for j in T.serial({cols}):
            B[i] = B[i] + A[i, j]
''')
    sch = pp.Schedule(f)
    _, lane = sch.split("j", [None, 16], tail="partition")
    sch.rfactor(lane)
    sch.vectorize(lane)
    return sch.func


@functools.cache
def scheduled_dot():
    return codegen.build(dot_schedule(dot(4 * 96), chunks=4))


def _random(func, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        if np.dtype(p.dtype).kind == "f":
            out.append(rng.standard_normal(p.shape).astype(p.dtype))
        else:
            out.append(rng.integers(-100, 100, p.shape).astype(p.dtype))
    return out


def _same_as_reference(kernel, func, exact=True):
    want, got = _random(func), _random(func)
    codegen.build(func, target="python")(*want)
    kernel(*got)
    for w, g in zip(want, got, strict=True):
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _same_as_matmul(kernel, func):
    """``kernel``, a scheduled 256^3 matmul, against numpy's in float64: the reference
    executor takes minutes at this size (tests/test_zoo.py runs the same schedule
    against it at small sizes), and the packing only happens at this one."""
    a, b, c = _random(func)
    kernel(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-4, atol=1e-4)


def test_a_vectorized_loop_along_an_exact_reduction_holds_the_element_in_a_local():
    lines = scheduled_dot().source.splitlines()
    start = lines.index("    for k_0 in numba.prange(4):")
    assert lines[start:start + 7] == [
        "    for k_0 in numba.prange(4):",
        "        C_rf_acc = C_rf[np.uint64(k_0)]",
        "        for k_1 in range(96):",
        "            # block dot",
        "            vk = k_0 * 96 + k_1",
        "            C_rf_acc = np.int32(C_rf_acc + np.int32(A[np.uint64(vk)]) "
        "* np.int32(B[np.uint64(vk)]))",
        "        C_rf[np.uint64(k_0)] = C_rf_acc",
    ]


@pytest.mark.numba
def test_the_int8_dot_with_its_lanes_in_a_local_runs_as_the_reference():
    _same_as_reference(scheduled_dot(), scheduled_dot().func)


def test_a_kernel_with_a_vectorized_loop_is_marked_for_the_slp_vectorizer():
    assert slp.MARK in codegen.build(lanes_row_sum(4, 40)).source
    assert slp.MARK not in codegen.build(dot(64)).source  # no vectorized loop


def test_the_slp_flag_is_set_only_while_a_marked_kernel_compiles():
    before = config.SLP_VECTORIZE
    with slp.vectorizing():
        assert config.SLP_VECTORIZE == 1
    assert config.SLP_VECTORIZE == before
    with slp.vectorizing(False):
        assert config.SLP_VECTORIZE == before
    assert slp.wanted({"_pp_slp_vectorize": True}) and not slp.wanted({})


def _compiled(func, tmp_path, monkeypatch, edit=lambda source: source):
    """``func``'s kernel compiled afresh in this process (Numba's dispatcher): the
    machine code the asm tests read, and what they run."""
    monkeypatch.setenv("POLYPAD_CACHE_DIR", str(tmp_path))  # compiled here, not loaded
    kernel = codegen.build(func)
    # A line of its own makes the module new to this process too: a kernel another
    # test loaded (from another cache, perhaps without its machine code) is not reused.
    fresh = edit(kernel.source) + f"\n# compiled afresh in {tmp_path.name}\n"
    return compile_kernel(kernel.func, fresh)


def _asm(func, tmp_path, monkeypatch, edit=lambda source: source) -> str:
    dispatcher = _compiled(func, tmp_path, monkeypatch, edit)
    return "\n".join(dispatcher.inspect_asm().values())


@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_the_16_lanes_of_a_row_sum_are_packed_adds(tmp_path, monkeypatch):
    # The plain loop pair alone: the rotated one (codegen/numba/lane_rotation.py), for
    # a row off a 64-byte boundary, is vectorized as a loop, with the mark or without.
    monkeypatch.setattr(lane_rotation, "ENABLED", False)
    func = lanes_row_sum(3, 16 * 40 + 5)
    marked = _compiled(func, tmp_path, monkeypatch)
    asm = "\n".join(marked.inspect_asm().values())
    assert "addps" in asm  # packed (vaddps on AVX): the 16 partial sums in vectors
    # The same module without the mark is compiled as Numba compiles by default:
    # the lanes stay 16 scalar adds.
    unmarked = _asm(func, tmp_path, monkeypatch,
                    edit=lambda source: source.replace(slp.MARK, ""))
    assert "addps" not in unmarked and "addss" in unmarked
    # The packed code itself, run (a third compilation, of the build's own module in
    # this empty cache, would make the same code again).
    _same_as_reference(marked, func, exact=True)


@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_the_slp_vectorizer_stays_on_when_numbas_environment_changed(tmp_path, monkeypatch):
    # Numba re-reads NUMBA_* variables when a compilation starts and resets its flags
    # where one changed since (a notebook setting one, NUMBA_ENABLE_CUDASIM set by an
    # import): the kernel's lanes must still be packed.
    monkeypatch.setenv("NUMBA_COLOR_SCHEME", "no_color")
    asm = _asm(lanes_row_sum(3, 16 * 40 + 5), tmp_path, monkeypatch)
    assert "addps" in asm

@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_the_int8_dots_lanes_multiply_add_pairs(tmp_path, monkeypatch):
    asm = _asm(dot_schedule(dot(2 * 160), chunks=2), tmp_path, monkeypatch)
    assert "pmaddwd" in asm  # vpmaddwd on AVX: int16 pairs multiplied and added


def test_openmp_workers_sleep_unless_the_environment_says_otherwise(monkeypatch):
    for name in threads.USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(threads, "_libgomp_loaded", lambda: False)
    monkeypatch.setattr(threads, "_set_here", False)
    threads.configure()
    assert os.environ["OMP_WAIT_POLICY"] == "passive"
    assert threads.wait_policy() == "OMP_WAIT_POLICY=passive (polypad's default)"

    monkeypatch.setattr(threads, "_set_here", False)
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    threads.configure()
    assert os.environ["OMP_WAIT_POLICY"] == "active"
    assert threads.wait_policy() == "OMP_WAIT_POLICY=active (set by the environment)"

    monkeypatch.delenv("OMP_WAIT_POLICY")
    monkeypatch.setenv("GOMP_SPINCOUNT", "1000")
    threads.configure()
    assert "OMP_WAIT_POLICY" not in os.environ


def test_a_process_that_loaded_libgomp_first_is_left_alone(monkeypatch):
    for name in threads.USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(threads, "_libgomp_loaded", lambda: True)
    monkeypatch.setattr(threads, "_set_here", False)
    threads.configure()
    assert "OMP_WAIT_POLICY" not in os.environ
    assert threads.wait_policy().startswith("libgomp's default")


def stencil(n: int, chunk: int, lanes: int = 16):
    """A 1-D stencil in chunks on the cores, each chunk in lanes."""
    f = pp.parse(f'''
@T.prim_func
def stencil(A: T.Buffer(({n + 2},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in T.serial({n}):
        with T.block("B"):
            B[i] = T.float32(0.25) * A[i] + T.float32(0.5) * A[i + 1] + T.float32(0.25) * A[i + 2]
''')
    sch = pp.Schedule(f)
    i_0, i_1 = sch.split("i", [None, chunk])
    _, i_3 = sch.split(i_1, [None, lanes])
    sch.parallel(i_0)
    sch.vectorize(i_3)
    return sch.func


def test_indices_from_a_parallel_counter_are_unsigned_where_never_negative():
    source = codegen.build(stencil(64, 32)).source
    assert ("B[np.uint64(i_0 * 32 + (i_1_0 * 16 + i_1_1))] = np.float32(0.25) * "
            "A[np.uint64(i_0 * 32 + (i_1_0 * 16 + i_1_1))]") in source
    # Serial: Numba's own indexing, unchanged.
    assert "np.uint64" not in codegen.build(dot(64)).source
    # An index that interval arithmetic cannot show non-negative stays signed.
    shifted = codegen.build(pp.parse('''
@T.prim_func
def shifted(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.parallel(8):
        B[i] = A[i * 2 - i // 2]
''')).source
    assert "B[np.uint64(i)] = A[i * 2 - i // 2]" in shifted


@pytest.mark.numba
def test_unsigned_indices_select_the_same_elements():
    func = stencil(3 * 48 + 0, 48)
    _same_as_reference(codegen.build(func), func, exact=True)
    shifted = pp.parse('''
@T.prim_func
def shifted(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.parallel(8):
        B[i] = A[i * 2 - i // 2] + A[15 - i]
''')
    _same_as_reference(codegen.build(shifted), shifted, exact=True)


@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_a_parallel_1d_stencil_loads_without_gathers(tmp_path, monkeypatch):
    func = stencil(8 * 4096, 4096)
    asm = _asm(func, tmp_path, monkeypatch)
    assert "vgather" not in asm and "vscatter" not in asm
    signed = _asm(func, tmp_path, monkeypatch,
                  edit=lambda source: re.sub(r"np\.uint64\(((?:[^()]|\([^()]*\))*)\)",
                                             r"\1", source))
    if cpu_has_avx512():  # the gathers the casts avoid
        assert "vgather" in signed


def blocked_matmul_schedule(f, tile_k: int = 128):
    """The zoo's matmul as docs/schedules.md had it until November 2026: ``k`` in
    blocks, B's block packed per block of ``k`` (on the stack at 128 x 32), the
    8 x 32 tile of C loaded from C and stored back per block."""
    sch = pp.Schedule(f)
    i, j, k = sch.get_loops("C")
    i_0, j_0, i_1, j_1 = sch.tile([i, j], [8, 32])
    k_0, k_1 = sch.split(k, [None, tile_k])
    sch.reorder(j_0, k_0, i_0, k_1, i_1, j_1)
    init = sch.decompose_reduction("C", k_0)
    tile = sch.cache_write("C", "C", "local", at=i_0)
    panel = sch.cache_read("C", "B", "local", at=k_0)
    sch.parallel(j_0)
    sch.unroll(i_1)
    sch.vectorize(j_1)
    sch.vectorize(init[-1])
    for copy in (panel, tile + "_in", tile):
        sch.vectorize(sch.get_loops(copy)[-1])
    return sch


def matmul_register_tile(n: int):
    """A blocked matmul: B's 128 x 32 blocks packed, and an 8 x 32 tile of C in a
    buffer of its own, both on the stack."""
    return blocked_matmul_schedule(matmul(n)).func


def test_the_packed_panel_and_the_tile_are_stack_buffers_copied_by_nests():
    source = codegen.build(matmul_register_tile(256)).source
    assert "B_local = numba.carray(_pp_stack_zeros(4096, np.float32), (128, 32))" in source
    assert "C_local = numba.carray(_pp_stack_zeros(256, np.float32), (8, 32))" in source
    assert slp.MARK in source
    # The copies into and out of the tile and the panel keep their rows and columns
    # as loops (codegen/numba/collapse.py): one row of vectors per iteration.
    assert ("            for ax0 in range(128):\n"
            "                for ax1 in range(32):\n"
            "                    B_local[ax0, ax1] = B[128 * k_0 + ax0, "
            "np.uint64(32 * j_0 + ax1)]\n") in source
    assert "//" not in source and "%" not in source


def _parallel_body_asm(func, tmp_path, monkeypatch):
    """The machine code of ``func``'s parallel loop body as the process that compiles
    it runs it, and the kernel compiled (Numba's dispatcher) to run it: Numba compiles
    a ``prange`` body as a library of its own and calls that library's code; the
    kernel's own library (``inspect_asm``, and the on-disk cache) holds a copy
    optimized again after linking, which may differ.  The tests run this very
    compilation: building the kernel again in the empty cache would compile the same
    code a second time (some 10 s for a 256^3 matmul)."""
    dispatcher = _compiled(func, tmp_path, monkeypatch)
    (overload,) = dispatcher.overloads.values()
    bodies = [lib for lib in overload.library._linking_libraries
              if "parfor_gufunc" in lib.name]
    assert bodies, "no parallel loop body among the linked libraries"
    return "\n".join(lib.get_asm_str() for lib in bodies), dispatcher


@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_the_register_tile_runs_as_packed_fmas(tmp_path, monkeypatch):
    func = matmul_register_tile(256)
    asm, compiled = _parallel_body_asm(func, tmp_path, monkeypatch)
    # 8 rows x 32 columns: 16 (AVX-512) or 32 (AVX2) packed multiply-adds per k, the
    # tile in registers, and no scalar ones.  (Scatters may remain, in a version of
    # the packing loop LLVM makes for a B whose rows are one element apart.)
    if cpu_has_avx512():
        assert len(re.findall(r"vfmadd\d+ps\s+\S+, \S+, %zmm", asm)) >= 16
    assert not re.search(r"vfmadd\d+ss", asm)
    _same_as_matmul(compiled, func)


def matmul_heap_panel(n: int):
    """The blocked matmul with B's 256 x 32 blocks packed: 32 KB, over the stack's
    limit, so the panel is a heap buffer (codegen/numba/aligned.py) that the
    parallel loop's body reads while it updates the register tile."""
    return blocked_matmul_schedule(matmul(n), tile_k=256).func


def test_a_panel_over_the_stack_limit_is_a_heap_buffer_beside_the_stack_tile():
    source = codegen.build(matmul_heap_panel(256)).source
    assert ("B_local = _pp_aligned_zeros((256) * (32), np.float32).reshape((256, 32))"
            in source)
    assert "C_local = numba.carray(_pp_stack_zeros(256, np.float32), (8, 32))" in source
    assert "for j_0 in numba.prange(8):" in source


@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_the_register_tile_fed_from_a_heap_panel_runs_as_packed_fmas(tmp_path, monkeypatch):
    # The body's own library, optimized once by Numba, kept the tile in 256 scalar
    # multiply-adds (4.7 GFLOP/s at 1024^3) while the cached copy had packed ones;
    # codegen/numba/parfor_bodies.py optimizes it as the copy is.
    func = matmul_heap_panel(256)
    asm, compiled = _parallel_body_asm(func, tmp_path, monkeypatch)
    assert not re.search(r"vfmadd\d+ss", asm) and not re.search(r"\bv?mulss\b", asm)
    assert len(re.findall(r"vfmadd\d+ps", asm)) >= 16
    _same_as_matmul(compiled, func)


def test_the_zoo_matmul_starts_its_tiles_at_zero_in_registers_and_never_reads_c():
    # docs/schedules.md's matmul: cache_write before decompose_reduction, so the
    # zeros go to the tile's buffer; no pass zeroes C and no tile is loaded from it.
    source = codegen.build(matmul_schedule(matmul(256)).func).source
    assert "C_local = numba.carray(_pp_stack_zeros(256, np.float32), (8, 32))" in source
    assert ("B_local = _pp_aligned_zeros((256) * (128), np.float32).reshape((256, 128))"
            in source)
    assert "C_local_in" not in source
    assert not re.search(r"\bC\[[^\]]*\] = np\.float32\(0", source)
    assert re.search(r"\bC\[[^\]]*\] = C_local\[", source)


@pytest.mark.numba
@pytest.mark.skipif(not X86, reason="x86 instruction names")
def test_the_zoo_matmul_tile_runs_as_packed_fmas(tmp_path, monkeypatch):
    func = matmul_schedule(matmul(256)).func
    asm, compiled = _parallel_body_asm(func, tmp_path, monkeypatch)
    if cpu_has_avx512():
        assert len(re.findall(r"vfmadd\d+ps\s+\S+, \S+, %zmm", asm)) >= 16
    assert not re.search(r"vfmadd\d+ss", asm)
    _same_as_matmul(compiled, func)


def test_parfor_bodies_are_reoptimized_only_while_a_kernel_compiles():
    from numba.core import codegen as numba_codegen

    from codegen.numba import parfor_bodies

    numba_optimize = numba_codegen.CPUCodeLibrary._optimize_final_module
    with parfor_bodies.optimized_as_cached():
        assert numba_codegen.CPUCodeLibrary._optimize_final_module is not numba_optimize
    assert numba_codegen.CPUCodeLibrary._optimize_final_module is numba_optimize
    named = type("Library", (), {})
    body, kernel = named(), named()
    body.name, kernel.name = "__numba_parfor_gufunc_0x7f00", "kernel"
    assert parfor_bodies.is_parfor_body(body) and not parfor_bodies.is_parfor_body(kernel)
