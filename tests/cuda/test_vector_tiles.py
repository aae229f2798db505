"""``sch.set_alignment`` and the ``vector`` option of the SGEMM schedule: each thread's
outputs in runs of consecutive rows and columns, ``A``'s tile stored ``k`` major, and
the shared tiles aligned, so that the compiler may load a run at once.

On the simulator (no alignment there, no vector loads): the printed schedule, the
emitted module, exact runs against the plain nest and the barrier enumeration.  The
loads themselves (``ld.shared.v4.f32``) are in ``benchmarks/bench_cuda_compile.py``'s
PTX counts.
"""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest
from gpu_enumeration import check_by_enumeration

import codegen
import polypad as pp
from polypad.errors import (
    AliasError,
    ArgumentTypeError,
    ArgumentValueError,
    IllegalTransformError,
)
from polypad.examples import matmul
from polypad.ir.structural import structural_equal
from polypad.script import script

STAGED = '''
@T.prim_func
def stage(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((8,), "float32", scope="shared"{align})
        for t in T.thread_binding(8, thread="threadIdx.x"):
            S[t] = A[t] * T.float32(2)
        for t2 in T.thread_binding(8, thread="threadIdx.x"):
            B[t2] = S[7 - t2]
'''


def test_set_alignment_is_tvms_align_and_changes_nothing_else():
    func = pp.parse(STAGED.format(align=""))
    sch = pp.Schedule(func)
    sch.set_alignment("S", 16)
    assert structural_equal(sch.func, pp.parse(STAGED.format(align=", align=16")))
    assert structural_equal(pp.parse(script(sch.func)), sch.func)
    source = codegen.build(sch.func, target="cuda").source
    assert "ALIGN_16 = None if config.ENABLE_CUDASIM else 16" in source
    assert "S = cuda.shared.array((8,), np.float32, alignment=ALIGN_16)" in source
    a = np.arange(8, dtype=np.float32)
    gpu, ref = K.run_both(sch.func, [a, np.zeros(8, np.float32)], reference=func)
    np.testing.assert_array_equal(gpu[1], (a * 2)[::-1])
    np.testing.assert_array_equal(ref[1], (a * 2)[::-1])
    # A second call replaces the alignment; no shared buffer aligned, no constant.
    sch.set_alignment("S", 32)
    assert dict(_alloc(sch.func).tvm_attrs) == {"align": 32}
    assert "config" not in codegen.build(func, target="cuda").source


def _alloc(func):
    from polypad.ir import nodes as n
    from polypad.ir.visitor import walk

    return next(x.buffer for x in walk(func.body) if isinstance(x, n.Allocate))


def test_set_alignment_refusals():
    func = pp.parse(STAGED.format(align=""))
    with pytest.raises(IllegalTransformError, match="set_alignment of A: it is a parameter"):
        pp.Schedule(func).set_alignment("A", 16)
    viewed = pp.parse(STAGED.format(align="").replace(
        "        for t2 in", "        S_flat = T.decl_buffer((2, 4), \"float32\", data=S.data, "
        "scope=\"shared\")\n        for t2 in"))
    with pytest.raises(AliasError, match="set_alignment: buffer 'S' shares its memory with "
                                         "'S_flat'"):
        pp.Schedule(viewed).set_alignment("S", 16)
    with pytest.raises(ArgumentTypeError, match="alignment"):
        pp.Schedule(func).set_alignment("S", 16.0)
    for bad in (12, 2, 0):
        with pytest.raises(ArgumentValueError, match=rf"set_alignment of S: {bad!r} bytes is "
                                                     r"not a power of two of at least its "
                                                     r"element's 4 bytes"):
            pp.Schedule(func).set_alignment("S", bad)


def test_sgemm_in_runs_of_consecutive_rows_and_columns():
    func = matmul.matmul(16, 16, 8)
    sch = matmul.schedule_cuda(func, threads=2, per_thread=4, k_tile=4, k_unroll=1,
                               vector=2, wide_copies=False, double_buffer=False)
    text = script(sch.func)
    # Each thread's rows: 2 * i_2 + 4 * i_1 + i_3, runs of 2 that 2 threads interleave;
    # A's tile k major, both tiles aligned on 2 floats.
    assert ('C_local[2 * i_2 + 4 * i_1 + i_3, 2 * j_2 + 4 * j_1 + j_3] + '
            'A_shared[k_1, 2 * i_2 + 4 * i_1 + i_3] * B_shared[k_1, 2 * j_2 + 4 * j_1 + j_3]'
            in text)
    assert text.count('scope="shared", align=8)') == 2
    kernel = codegen.build(sch.func, target="cuda")
    lines = [line.strip() for line in kernel.source.splitlines()]
    step = lines.index("for k_1 in range(4):")
    # Each run of a fragment one wide load (codegen.cuda.wide: ld.shared.v2.f32 on a GPU;
    # the simulator checks that each starts on a multiple of 2 elements).
    assert lines[step + 1:step + 5] == [
        "A_shared_v, A_shared_v_1 = _pp_wide.load2(A_shared, (k_1, 2 * i_2))",
        "B_shared_v, B_shared_v_1 = _pp_wide.load2(B_shared, (k_1, 2 * j_2))",
        "B_shared_v_2, B_shared_v_3 = _pp_wide.load2(B_shared, (k_1, 2 * j_2 + 4))",
        "A_shared_v_2, A_shared_v_3 = _pp_wide.load2(A_shared, (k_1, 2 * i_2 + 4))"]
    assert "ALIGNED_ARGUMENTS" not in kernel.source  # no argument read in runs
    assert kernel.source.count("cuda.syncthreads()") == 2
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])
    check_by_enumeration(sch.func)


@pytest.mark.parametrize("shape, options", [
    ((8, 16, 8), dict(vector=4, k_unroll=2, wide_copies=False)),  # double-buffered, runs of 4
    ((6, 10, 5), dict(vector=2, wide_copies=False)),  # partial tiles at every edge
    ((8, 8, 4), dict(vector=4, wide_copies=True)),  # tile copies and C in runs
    ((6, 8, 3), dict(vector=2, wide_copies=True)),  # partial tiles, runs of 2
])
def test_sgemm_runs_double_buffered_and_with_partial_tiles(shape, options):
    func = matmul.matmul(*shape)
    sch = matmul.schedule_cuda(func, threads=2, per_thread=4, k_tile=4, **options)
    source = codegen.build(sch.func, target="cuda").source
    assert ("_pp_wide.load" in source and "_pp_wide.store" in source) == \
        options["wide_copies"]
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])
    check_by_enumeration(sch.func)


def test_vector_must_divide_the_outputs_per_thread():
    with pytest.raises(ArgumentValueError, match=r"vector=3 must be a positive divisor of "
                                                 r"per_thread=8"):
        matmul.schedule_cuda(matmul.matmul(32, 32, 8), vector=3)


def test_the_classic_sgemm_asks_no_alignment():
    source = codegen.build(matmul.schedule_cuda(matmul.matmul(16, 16, 8), vector=1).func,
                           target="cuda").source
    assert "alignment" not in source and "from numba import cuda\n" in source


def test_sgemm_wide_copies_move_tiles_and_c_in_runs():
    func = matmul.matmul(8, 16, 8)
    sch = matmul.schedule_cuda(func, threads=2, per_thread=4, k_tile=4, vector=4,
                               wide_copies=True, double_buffer=False)
    source = codegen.build(sch.func, target="cuda").source
    lines = [line.strip() for line in source.splitlines()]
    # Two runs of each tile per thread from global memory, B's stored in runs too (A's
    # tile is k major: its runs of k are no runs there); C written back in rows of 4.
    assert source.count("_pp_wide.load4(A, ") == source.count("_pp_wide.load4(B, ") == 2
    assert source.count("_pp_wide.store4(B_shared, ") == 2
    assert "_pp_wide.store4(A_shared" not in source
    assert [line for line in lines if line.startswith("_pp_wide.store4(C, ")] == [
        f"_pp_wide.store4(C, (ax0_1 * 4{row}, 8 * j_0 + ax1_1 * 4), "
        + ", ".join(f"C_local_{r}_{c}" for c in range(4)) + ")"
        for r, row in enumerate(("", " + 1", " + 2", " + 3"))]
    assert "ALIGNED_ARGUMENTS = {0: 16, 1: 16, 2: 16}" in lines
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])


def test_wide_copies_need_runs():
    with pytest.raises(ArgumentValueError, match=r"wide_copies=True moves runs of vector "
                                                 r"elements; give vector=4 \(or 2\)"):
        matmul.schedule_cuda(matmul.matmul(16, 16, 8), vector=1, wide_copies=True)
