# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_simplify.py, line 507,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def before(A: T.Buffer(16, "float32")):
    for i in T.serial(16):
        if T.shift_left(1, i, dtype="int32") >= 1:
            A[i] = 0.0
