"""polypad.examples' GPU schedules, at small sizes, on the simulator against the plain
loop nests run by the reference executor."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np

import codegen
from polypad.examples import conv_layer, matmul


def test_matmul_schedule_cuda():
    func = matmul.matmul(8, 12, 8)
    sch = matmul.schedule_cuda(func, tile=4)
    kernel = codegen.build(sch.func, target="cuda")
    assert kernel.source.count("cuda.syncthreads()") == 2
    assert "def launch_0():\n    return (3, 2, 1), (4, 4, 1)" in kernel.source
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[2], ref[2])


def test_conv_layer_schedule_cuda():
    func = conv_layer.conv_layer(n=1, ci=2, co=4, w=4, h=2)
    sch = conv_layer.schedule_cuda(func, tile_x=2, tile_c=2)
    kernel = codegen.build(sch.func, target="cuda")
    assert "conv_local = cuda.local.array((1, 1, 1, 1), np.float32)" in kernel.source
    assert "syncthreads" not in kernel.source  # every thread computes its own elements
    gpu, ref = K.run_both(sch.func, K.inputs(func), reference=func)
    np.testing.assert_array_equal(gpu[3], ref[3])
