from polypad import T

# RFC 0077, Implementation options - Never read from transformation padding: initial.


@T.prim_func
def func(A: T.Buffer[(14,), "int32"], B: T.Buffer[(1,), "int32"]):
    B[0] = 0
    for i in T.serial(14):
        B[0] = B[0] + A[i]
