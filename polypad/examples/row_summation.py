# RFC 0077, "Overcompute vs Branching": the sum over each row of A.
# The RFC fixes the shape at (16, 14); here the extents are scalar
# parameters, so one kernel serves the RFC's size and the demo's 4096 x 4094.
from polypad import T


@T.prim_func
def row_summation(a: T.handle, b: T.handle, n: T.int32, m: T.int32):
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.serial(n):
        B[i] = 0.0
        for j in T.serial(m):
            B[i] = B[i] + A[i, j]
