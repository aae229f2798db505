# Origin: apache/tvm, tests/python/tir-analysis/test_tir_analysis_verify_well_formed.py, line 227,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def func(A: T.Buffer([256, 256], "float32")):

    for tile_i, tile_j in T.grid(16, 16):
        B = T.Buffer([16, 16], "float32")
        T.attr(
            [B, A],
            "buffer_bind_scope",
            T.tvm_tuple(
                tile_i * 16,
                16,
                tile_j * 16,
                16,
                dtype="handle",
            ),
        )
        for i, j in T.grid(16, 16):
            B[i, j] = 0.0
