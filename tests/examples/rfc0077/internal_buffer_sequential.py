from polypad import T

# RFC 0077, Implementation options - Allocate internal buffer containing transformation
# padding: after sequential_buffer_access of A_local.


@T.prim_func
def func(A: T.Buffer[(14,), "int32"], B: T.Buffer[(1,), "int32"]) -> None:
    A_local = T.alloc_buffer([4, 4], dtype="int32", scope="local")
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            A_local[io, ii] = A[4 * io + ii]

    for io, ii in T.grid(4, 4):
        if io == 3 and ii >= 2:
            A_local[io, ii] = 0

    B[0] = 0
    for io, ii in T.grid(4, 4):
        if 4 * io + ii < 14:
            B[0] = B[0] + A_local[io, ii]
