# Origin: apache/tvm, tests/python/tir-base/test_lower_build.py, line 55,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((128, 128), "float32"),
    B: T.Buffer((128, 128), "float32"),
    C: T.Buffer((128, 128), "float32"),
) -> None:
    # function attr dict
    T.func_attr({"global_symbol": "main", "from_legacy_te_schedule": True, "tir.noalias": True})
    A_flat = T.Buffer([16384], data=A.data)
    B_flat = T.Buffer([16384], data=B.data)
    C_flat = T.Buffer([16384], data=C.data)
    # body
    for x, y in T.grid(128, 128):
        C_flat[x * 128 + y] = 0.0
        for k in T.serial(0, 128):
            C_flat[x * 128 + y] = (
                C_flat[x * 128 + y] + A_flat[x * 128 + k] * B_flat[y * 128 + k]
            )
