from polypad import T

# RFC 0077, Points of Communication: padding of the internal buffer B written with 0.


@T.prim_func
def single_func_step1(A: T.Buffer[14, "int32"], C: T.Buffer[1, "int32"]):
    # RFC: B is allocated inside block "transform" but read in block "compute";
    # allocated at function level instead.
    B = T.alloc_buffer([4, 4], "int32")
    with T.block("transform"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                B[io, ii] = A[4 * io + ii]
            else:
                B[io, ii] = 0

    with T.block("compute"):
        C[0] = 0
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                C[0] = C[0] + B[io, ii]
