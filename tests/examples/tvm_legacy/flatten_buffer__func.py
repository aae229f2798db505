# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_flatten_buffer.py, line 350,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def func():
    buf = T.alloc_buffer(
        [1, 1],
        dtype="int32",
        scope="global",
        axis_separators=[1],
    )
    buf[0, 0] = 0
