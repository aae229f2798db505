# Origin: apache/tvm, tests/python/tir-schedule/test_tir_schedule_utilities.py, line 130,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def tuple_reduction(data: T.Buffer((4, 32), "float32"), T_add: T.Buffer((4,), "float32")) -> None:
    # function attr dict
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    # body
    with T.block("root"):
        T.reads()
        T.writes()
        data_red_temp_v0 = T.alloc_buffer([4], dtype="float32")
        data_red_temp_v1 = T.alloc_buffer([4], dtype="float32")
        for i0, i1 in T.grid(4, 32):
            with T.block("data_red_temp"):
                ax0, k1 = T.axis.remap("SR", [i0, i1])
                T.reads(data[ax0, k1])
                T.writes(data_red_temp_v0[ax0], data_red_temp_v1[ax0])
                with T.init():
                    data_red_temp_v0[ax0] = T.float32(0)
                    data_red_temp_v1[ax0] = T.float32(0)
                v_data_red_temp_v0: T.float32 = data_red_temp_v0[ax0] + data[ax0, k1]
                v_data_red_temp_v1: T.float32 = (
                    data_red_temp_v1[ax0] + data[ax0, k1] * data[ax0, k1]
                )
                data_red_temp_v0[ax0] = v_data_red_temp_v0
                data_red_temp_v1[ax0] = v_data_red_temp_v1
        for i0 in range(4):
            with T.block("T_add"):
                ax0 = T.axis.remap("S", [i0])
                T.reads(data_red_temp_v0[ax0], data_red_temp_v1[ax0])
                T.writes(T_add[ax0])
                T_add[ax0] = data_red_temp_v0[ax0] + data_red_temp_v1[ax0]
