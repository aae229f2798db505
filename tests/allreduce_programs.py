"""Cross-thread reductions written in polypad's syntax, for what TVM's text never has.

TVM's ``LowerCrossThreadReduction`` gives each reduction a thread loop of its own
(``tests/tvm_corpus_wide.py`` holds those); a program may still hold two in one
thread loop, which the lowering splits twice.
"""

#: Two reductions in one thread loop, written in polypad's syntax (TVM's lowering gives
#: each reduction a thread loop of its own): the max, then the sum of exp(a - max).
TWO_IN_ONE_LOOP = '''
@T.prim_func
def two(A: T.Buffer((2, 8), "float32"), M: T.Buffer((2,), "float32"),
        S: T.Buffer((2,), "float32")):
    for b in T.thread_binding(2, thread="blockIdx.x"):
        red_m = T.alloc_buffer((1,), "float32", scope="local")
        red_s = T.alloc_buffer((1,), "float32", scope="local")
        for t in T.thread_binding(8, thread="threadIdx.x"):
            with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [T.float32(-1e30)]),
                        "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), A[b, t], T.bool(True), red_m[0], t)
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
                T.tvm_thread_allreduce(T.uint32(1), T.exp(A[b, t] - red_m[0]), t < 6,
                                       red_s[0], t)
            if t == 0:
                M[b] = red_m[0]
                S[b] = red_s[0]
'''
