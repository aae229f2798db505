# Origin: apache/tvm, tests/python/tir-schedule/test_tir_schedule_analysis.py, line 184,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def main(
    placeholder: T.Buffer((1, 4, 56, 56, 16), "uint8"),
    placeholder_1: T.Buffer((16, 4, 1, 1, 4, 16, 4), "int8"),
    conv2d_NCHWc_int8: T.Buffer((1, 16, 56, 56, 16), "int32"),
) -> None:
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 in T.grid(1, 16, 56, 56, 16, 1, 1, 4, 4, 4):
        with T.block("conv2d_NCHWc_int8"):
            (
                n,
                oc_chunk,
                oh,
                ow,
                oc_block,
                kh,
                kw,
                ic_outer,
                ic_f_inner,
                ic_s_inner,
            ) = T.axis.remap("SSSSSRRRRR", [i0, i1, i2, i3, i4, i5, i6, i7, i8, i9])
            T.reads(
                placeholder[n, ic_outer, oh + kh, ow + kw, ic_f_inner * 4 + ic_s_inner],
                placeholder_1[oc_chunk, ic_outer, kh, kw, ic_f_inner, oc_block, ic_s_inner],
            )
            T.writes(conv2d_NCHWc_int8[n, oc_chunk, oh, ow, oc_block])
            with T.init():
                conv2d_NCHWc_int8[n, oc_chunk, oh, ow, oc_block] = 0
            conv2d_NCHWc_int8[n, oc_chunk, oh, ow, oc_block] = conv2d_NCHWc_int8[
                n, oc_chunk, oh, ow, oc_block
            ] + T.cast(
                placeholder[n, ic_outer, oh + kh, ow + kw, ic_f_inner * 4 + ic_s_inner],
                "int32",
            ) * T.cast(
                placeholder_1[oc_chunk, ic_outer, kh, kw, ic_f_inner, oc_block, ic_s_inner],
                "int32",
            )
