from polypad import T

# RFC 0077, Implementation options - Apply operator element-wise over the transformation
# padding: initial.


@T.prim_func
def func(A: T.Buffer[(14,), "int32"], B: T.Buffer[(14,), "int32"]):
    for i in T.serial(14):
        B[i] = 2 * A[i]
