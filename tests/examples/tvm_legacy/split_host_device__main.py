# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_split_host_device.py, line 72,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main():
    T.func_attr({"global_symbol": "main", "target": T.target("cuda", host="llvm")})
    for i in range(16):
        T.attr(0, "device_scope", 0)
        for j in range(16):
            T.evaluate(i)
