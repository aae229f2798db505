from polypad import T

# RFC 0077, Points of Communication: initial function, two stages in one function.


@T.prim_func
def single_func_step0(A: T.Buffer[14, "int32"], C: T.Buffer[1, "int32"]):
    B = T.alloc_buffer([4, 4], "int32")
    with T.block("transform"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                B[io, ii] = A[4 * io + ii]

    with T.block("compute"):
        C[0] = 0
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                C[0] = C[0] + B[io, ii]
