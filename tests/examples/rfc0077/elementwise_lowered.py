from polypad import T

# RFC 0077, Implementation options - Apply operator element-wise over the transformation
# padding: after RemoveAssume and RemoveStoreUndef.


@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii in T.grid(4, 4):
        B[io, ii] = 2 * A[io, ii]
