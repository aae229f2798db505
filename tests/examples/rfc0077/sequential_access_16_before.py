from polypad import T

# RFC 0077, New Utility - Reorder Loops According to Buffer: shape 16, original.


@T.prim_func
def func(A: T.Buffer[(16,), "int32"]):
    with T.block("compute"):
        for i in T.serial(16):
            A[i] = i
