# Origin: apache/tvm, tests/python/tir-schedule/test_tir_schedule_transform.py, line 50,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main(
    placeholder: T.Buffer((1024, 1024), "uint8"),
    placeholder_1: T.Buffer((64, 256, 16, 4), "int8"),
    compute: T.Buffer((1024, 1024), "int32"),
) -> None:
    # function attr dict
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    # body
    # with T.block("root")
    for i0, i1_0, i2_0, i1_1, i2_1 in T.grid(1024, 64, 256, 16, 4):
        with T.block("compute"):
            i = T.axis.spatial(1024, i0)
            j = T.axis.spatial(1024, i1_0 * 16 + i1_1)
            k = T.axis.reduce(1024, i2_0 * 4 + i2_1)
            T.reads(placeholder[i, k], placeholder_1[j // 16, k // 4, j % 16, k % 4])
            T.writes(compute[i, j])
            with T.init():
                compute[i, j] = 0
            compute[i, j] = compute[i, j] + T.cast(placeholder[i, k], "int32") * T.cast(
                placeholder_1[j // 16, k // 4, j % 16, k % 4], "int32"
            )
