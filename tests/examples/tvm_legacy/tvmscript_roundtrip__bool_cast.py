# Origin: apache/tvm, tests/python/unittest/test_tvmscript_roundtrip.py, line 3472,
# commit 7315c9d5b46408a047409f1e047cb6b7779c668e (v0.14.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def func() -> None:
    a = T.bool()
    T.evaluate(T.bool(T.int32(0)))
    T.evaluate(a == T.bool(False))
