from polypad import T

# RFC 0077, Implementation options - Never read from transformation padding:
# after sequential_buffer_access.


@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(1,), "int32"]):
    B[0] = 0
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[0] = B[0] + A[io, ii]
