# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_inject_virtual_thread.py, line 146,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def before_func():
    vthread = T.env_thread("vthread")
    T.launch_thread(vthread, 4)
    B_data = T.allocate([4], "int32", scope="shared")
    B = T.Buffer([4], "int32", data=B_data, scope="shared")
    B[0:4] = T.broadcast(vthread, 4)
