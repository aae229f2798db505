# Origin: apache/tvm, tests/python/tir-base/test_tir_specialize.py, line 250,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func(private=True)
def before(A_data: T.handle("float32"), A_size: T.int32):
    A_buf = T.decl_buffer(A_size, "float32", data=A_data)
    for i in range(A_size):
        A_buf[i] = A_buf[i] * 2.0
