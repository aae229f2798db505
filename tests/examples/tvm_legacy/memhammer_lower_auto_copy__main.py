# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_memhammer_lower_auto_copy.py, line 27,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, [1024, 1024])
    B = T.match_buffer(b, [1024, 1024])
    with T.block("root"):
        T.block_attr({"warp_execution": True})
        for ty in T.thread_binding(8, thread="threadIdx.y"):
            with T.block():
                A_shared_dyn = T.alloc_buffer([16, 128], dtype="float32", scope="shared.dyn")
                with T.block("A_shared"):
                    T.block_attr({"auto_copy": 1})
                    for ax0, ax1 in T.grid(128, 16):
                        A_shared_dyn[ax1, ax0] = A[ax0, ax1]
                with T.block("B"):
                    T.block_attr({"auto_copy": 1})
                    for ax1, ax0 in T.grid(16, 128):
                        B[ax1, ax0] = A_shared_dyn[ax1, ax0]
