from polypad import T

# RFC 0077, New Utility - Reorder Loops According to Buffer: shape 14,
# after sequential_buffer_access.


@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"]):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                A[io, ii] = 4 * io + ii
