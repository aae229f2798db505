# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_narrow_datatype.py, line 354,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def before(PSUM: T.Buffer((313600,), "int32"), PAVG: T.Buffer((313600,), "int32")):
    for j in T.parallel(T.int64(0), T.int64(280)):
        for i in T.serial(T.int64(0), T.int64(35)):
            for vi in T.vectorized(T.int64(0), T.int64(32)):
                PAVG[(((j * T.int64(1120)) + (i * T.int64(32))) + vi)] = T.cast(
                    T.Div(
                        T.cast(PSUM[(((j * T.int64(1120)) + (i * T.int64(32))) + vi)], "int64"),
                        T.max(
                            (
                                (
                                    (
                                        T.min(
                                            T.int64(1),
                                            (T.int64(34) - T.floormod(j, T.int64(35))),
                                        )
                                        + T.int64(2)
                                    )
                                    - T.max(
                                        (T.int64(1) - T.floormod(j, T.int64(35))), T.int64(0)
                                    )
                                )
                                * (
                                    (T.min(T.int64(1), (T.int64(34) - i)) + T.int64(2))
                                    - T.max((T.int64(1) - i), T.int64(0))
                                )
                            ),
                            T.int64(1),
                        ),
                    ),
                    "int32",
                )
