from polypad import T

# RFC 0077, Enhancement - Simplify: T.assume on a scalar, after simplification.


@T.prim_func
def func(A: T.Buffer[16, "int32"], n: T.int32):
    T.assume(n >= 0 and n < 8)

    for i in T.serial(16):
        A[i] = 0
