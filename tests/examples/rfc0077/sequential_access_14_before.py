from polypad import T

# RFC 0077, New Utility - Reorder Loops According to Buffer: shape 14, original.


@T.prim_func
def func(A: T.Buffer[(14,), "int32"]):
    with T.block("compute"):
        for i in T.serial(14):
            A[i] = i
