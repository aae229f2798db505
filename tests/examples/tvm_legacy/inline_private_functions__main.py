# Origin: apache/tvm, tests/python/tir-transform/test_tir_inline_private_functions.py, line 55,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main(A: T.Buffer([80, 16], "float32"), B: T.Buffer([64, 16], "float32")):
    for i in range(64):
        A_view_data: T.handle("float32") = T.address_of(A[i, 0])
        Aview = T.decl_buffer([16, 16], "float32", data=A_view_data)
        B_view_data: T.handle("float32") = T.address_of(B[i, 0])
        Bview = T.decl_buffer([16], "float32", data=B_view_data)
        for j in range(16):
            Bview[j] = 0.0
            for k in range(16):
                Bview[j] = Bview[j] + Aview[j, k]
