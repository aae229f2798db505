# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_compact_buffer_region.py, line 1034,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((128, 128), "float32"),
    B: T.Buffer((128, 128), "float32"),
    C: T.Buffer((128, 128), "float32"),
):
    for i_0 in range(5, annotations={"pragma_loop_partition_hint": 1}):
        for j_0 in range(5, annotations={"pragma_loop_partition_hint": 1}):
            A_local = T.decl_buffer((26, 128), scope="local")
            B_local = T.decl_buffer((128, 26), scope="local")
            C_local = T.decl_buffer((26, 26), scope="local")
            for ax0, ax1 in T.grid(26, 128):
                if i_0 * 26 + ax0 < 128:
                    A_local[ax0, ax1] = A[i_0 * 26 + ax0, ax1]
            for ax0, ax1 in T.grid(128, 26):
                if j_0 * 26 + ax1 < 128:
                    B_local[ax0, ax1] = B[ax0, j_0 * 26 + ax1]
            for i_1, j_1, k in T.grid(26, 26, 128):
                if i_0 * 26 + i_1 < 128 and j_0 * 26 + j_1 < 128:
                    if k == 0:
                        C_local[i_1, j_1] = T.float32(0)
                    C_local[i_1, j_1] = (
                        C_local[i_1, j_1] + A_local[i_1, k] * B_local[k, j_1]
                    )
            for ax0, ax1 in T.grid(26, 26):
                if i_0 * 26 + ax0 < 128 and j_0 * 26 + ax1 < 128:
                    C[i_0 * 26 + ax0, j_0 * 26 + ax1] = C_local[ax0, ax1]
