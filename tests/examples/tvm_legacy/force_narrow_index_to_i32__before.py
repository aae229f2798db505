# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_force_narrow_index_to_i32.py, line 25,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func(private=True)
def before(A: T.Buffer((T.int64(64),), "float32"), B: T.Buffer((T.int64(64),), "float32")):
    blockIdx_x = T.env_thread("blockIdx.x")
    T.launch_thread(blockIdx_x, T.int64(2))
    threadIdx_x = T.env_thread("threadIdx.x")
    T.launch_thread(threadIdx_x, T.int64(32))
    B[T.Cast("int64", blockIdx_x) * T.int64(32) + T.Cast("int64", threadIdx_x)] = A[
        T.Cast("int64", blockIdx_x) * T.int64(32) + T.Cast("int64", threadIdx_x)
    ] + T.float32(1)
