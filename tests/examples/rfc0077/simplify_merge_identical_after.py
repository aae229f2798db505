from polypad import T

# RFC 0077, Enhancement - Simplify: identical conditionals, after merging.


@T.prim_func
def func(A: T.Buffer[16, "float32"], B: T.Buffer[16, "float32"]):
    for i in T.serial(16):
        if i < 8:
            A[i] = 0.0
            B[i] = 2.0
        else:
            A[i] = 1.0
            B[i] = 3.0
