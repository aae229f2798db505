# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_storage_flatten.py, line 137,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main():
    T.func_attr({"from_legacy_te_schedule": True})

    # If a pointer defined using a LetStmt,
    A_data: T.handle("int32") = T.call_extern("dummy_extern_function", dtype="handle")

    # and a buffer is backed by that pointer,
    A = T.decl_buffer([1], dtype="float32", data=A_data)
    T.evaluate(A[0])
