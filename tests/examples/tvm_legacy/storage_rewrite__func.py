# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_storage_rewrite.py, line 709,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def func(A: T.Buffer((8,), "float32")):
    for i in range(8):
        B_data = T.allocate((1,), "float32", "global")
        B = T.Buffer(shape=[1], dtype="float32", data=B_data)
        B[0] = 3.14
        x: T.float32 = T.exp(B[0], dtype="float32")
        A[i] = (x + 1.0) / (x - 1.0)
