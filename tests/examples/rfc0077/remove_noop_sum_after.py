from polypad import T

# RFC 0077, Enhancement - Remove No Op: writing a known value, after RemoveNoOp.


@T.prim_func
def sum(A: T.Buffer[16, "float32"], B: T.Buffer[1, "float32"]):
    T.assume(B[0] == 0.0)

    for i in T.serial(16):
        B[0] = B[0] + A[i]
