from polypad import T

# RFC 0077, Implementation options - Never write to transformation padding:
# after sequential_buffer_access.


@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"]):
    for io, ii in T.grid(4, 4):
        if 0 <= 4 * io + ii < 14:
            A[io, ii] = 42
