# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_vectorize.py, line 705,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def expected(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,), "float32")
    B = T.match_buffer(b, (16,), "float32")
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i_0, i_1_s in T.grid(4, 4):
        if i_0 * 4 + i_1_s < 14:
            B[i_0 * 4 + i_1_s] = A[i_0 * 4 + i_1_s] + T.float32(1)
