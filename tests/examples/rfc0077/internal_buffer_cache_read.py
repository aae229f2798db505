from polypad import T

# RFC 0077, Implementation options - Allocate internal buffer containing transformation
# padding: after cache_read.


@T.prim_func
def func(A: T.Buffer[(14,), "int32"], B: T.Buffer[(1,), "int32"]) -> None:
    A_local = T.alloc_buffer([14], dtype="int32", scope="local")
    for i in T.serial(14):
        A_local[i] = A[i]

    B[0] = 0
    for i in T.serial(14):
        B[0] = B[0] + A_local[i]
