# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_hoist_expression.py, line 89,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def before(A: T.Buffer((128, 16), "float32"), n: T.int32):
    i = T.env_thread("threadIdx.x")
    T.launch_thread(i, 128)

    for j in T.serial(16):
        if i < 32:
            A[i, j] = 0.0
