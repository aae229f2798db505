# Origin: apache/tvm, tests/python/tir-transform/test_tir_transform_inject_permuted_layout.py, line 301,
# commit 22a9d388d441dbfd917d032564e2a1bccacd5f8c (v0.18.0).
# Copyright The Apache Software Foundation, licensed under the Apache License 2.0
# (https://www.apache.org/licenses/LICENSE-2.0); the function is extracted unchanged.
from tvm.script import tir as T


@T.prim_func
def before(p_O: T.handle):
    O = T.match_buffer(p_O, (T.int64(128), T.int64(128)), "float16")
    O_shared_dyn = T.alloc_buffer((T.int64(128), T.int64(128)), scope="shared.dyn")
    O_warp = T.alloc_buffer((T.int64(4), T.int64(4), T.int64(32), T.int64(8)), scope="warp")
    for threadIdx_z in T.thread_binding(T.int64(2), thread="threadIdx.z"):
        for threadIdx_y in T.thread_binding(T.int64(2), thread="threadIdx.y"):
            for threadIdx_x in T.thread_binding(T.int64(32), thread="threadIdx.x"):
                for v0, v1 in T.grid(T.int64(4), T.int64(4)):
                    with T.block("O.dyn_warp_o"):
                        T.block_attr({"permuted_layout": 1})
                        with T.block("O.dyn_warp_o"):
                            for local_id in range(T.int64(8)):
                                O_shared_dyn[threadIdx_z * T.int64(64) + v0 * T.int64(16) + local_id % T.int64(4) // T.int64(2) * T.int64(8) + threadIdx_x // T.int64(4), threadIdx_y * T.int64(64) + v1 * T.int64(16) + local_id // T.int64(4) * T.int64(8) + threadIdx_x % T.int64(4) * T.int64(2) + local_id % T.int64(2)] = O_warp[v0, v1, threadIdx_x, local_id]
                for v0 in range(T.int64(16)):
                    for v1 in T.vectorized(T.int64(8)):
                        with T.block("O.dyn"):
                            T.block_attr({"permuted_layout": 1})
                            O[v0 * T.int64(8) + threadIdx_z * T.int64(4) + threadIdx_y * T.int64(2) + threadIdx_x // T.int64(16), threadIdx_x % T.int64(16) * T.int64(8) + v1] = T.Cast("float16", O_shared_dyn[v0 * T.int64(8) + threadIdx_z * T.int64(4) + threadIdx_y * T.int64(2) + threadIdx_x // T.int64(16), threadIdx_x % T.int64(16) * T.int64(8) + v1])
