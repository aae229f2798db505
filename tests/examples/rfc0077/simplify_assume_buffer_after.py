from polypad import T

# RFC 0077, Enhancement - Simplify: T.assume on a buffer value, after simplification.


@T.prim_func
def func(A: T.Buffer[16, "int32"], B: T.Buffer[1, "int32"]):
    T.assume(B[0] == 0)

    if A[0] == 0:
        for i in T.serial(16):
            B[0] = B[0] + A[i]
