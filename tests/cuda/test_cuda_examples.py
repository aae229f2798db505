"""polypad.examples' GPU schedules, at small sizes, on the simulator against the plain
loop nests run by the reference executor."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np

import codegen
from polypad.examples import conv_layer, matmul


def test_matmul_schedule_cuda():
    func = matmul.matmul(16, 32, 16)
    sch = matmul.schedule_cuda(func, threads=4, per_thread=2, k_tile=4)
    kernel = codegen.build(sch.func, target="cuda")
    assert kernel.source.count("cuda.syncthreads()") == 2
    assert "def launch_0():\n    return (4, 2, 1), (4, 4, 1)" in kernel.source
    # Each thread's 2 x 2 outputs, 4 apart, in a local array of 2 x 2 (codegen.cuda.compact).
    assert "C_local = cuda.local.array((2, 2), np.float32)" in kernel.source
    # Indexed by the unrolled counters alone (isl: thread_y is i_2), written out as
    # constants, the reads of the shared tiles folded likewise.
    # The fragments: each value of the shared tiles the thread needs, once per step of k
    # in a register, then the 2 x 2 multiply-adds on the registers.
    lines = [line.strip() for line in kernel.source.splitlines()]
    step = lines.index("for k_1 in range(4):")
    assert lines[step + 2:step + 10] == [
        "A_shared_v = A_shared[i_2, k_1]", "B_shared_v = B_shared[k_1, j_2]",
        "B_shared_v_1 = B_shared[k_1, j_2 + 4]", "A_shared_v_1 = A_shared[i_2 + 4, k_1]",
        "C_local[0, 0] = C_local[0, 0] + A_shared_v * B_shared_v",
        "C_local[0, 1] = C_local[0, 1] + A_shared_v * B_shared_v_1",
        "C_local[1, 0] = C_local[1, 0] + A_shared_v_1 * B_shared_v",
        "C_local[1, 1] = C_local[1, 1] + A_shared_v_1 * B_shared_v_1"]
    assert "thread_y" not in kernel.source
    # Every accumulator is written (zeroed) before it is read: no second zero fill.
    assert "for _z" not in kernel.source
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])
    plain = matmul.schedule_cuda(matmul.matmul(8, 8, 8), threads=4, per_thread=1, k_tile=4)
    assert "cuda.local.array((1, 1)" in codegen.build(plain.func, target="cuda").source


def test_conv_layer_schedule_cuda():
    func = conv_layer.conv_layer(n=1, ci=2, co=4, w=4, h=2)
    sch = conv_layer.schedule_cuda(func, tile_x=2, tile_c=2)
    kernel = codegen.build(sch.func, target="cuda")
    assert "conv_local = cuda.local.array((1, 1, 1, 1), np.float32)" in kernel.source
    assert "syncthreads" not in kernel.source  # every thread computes its own elements
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[3], ref[3])
