# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_lower_init_block.py, line 26,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, [64, 64, 64])
    B = T.match_buffer(b, [64])

    for i0, j0 in T.grid(64, 64):
        for k0 in T.serial(32, 64):
            with T.block():
                i, j, k = T.axis.remap("SRR", [i0, j0, k0])
                with T.init():
                    B[i] = T.float32(0)
                B[i] += A[i, j, k]
