from polypad import T

# RFC 0077, Implementation options - Apply operator element-wise over the transformation
# padding: after sequential_buffer_access(B).  (The RFC omits A's T.assume in this step.)


@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[io, ii] = 2 * A[io, ii]

    for io, ii in T.grid(4, 4):
        if 4 * io + ii >= 14:
            B[io, ii] = T.undef()
