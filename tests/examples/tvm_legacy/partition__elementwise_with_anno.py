# Origin: apache/tvm, tests/python/tir-schedule/test_tir_schedule_partition.py, line 52,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def elementwise_with_anno(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, (128, 128, 128))
    B = T.match_buffer(b, (128, 128, 128))
    for i, j in T.grid(128, 128):
        for k in T.serial(0, 128, annotations={"useless_annotation": True}):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                T.reads([A[vi, vj, vk]])
                T.writes([B[vi, vj, vk]])
                B[vi, vj, vk] = A[vi, vj, vk] * 2.0
