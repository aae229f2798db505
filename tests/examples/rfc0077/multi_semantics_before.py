from polypad import T

# RFC 0077, Implementation options - Multiple Buffer Semantics: initial.


@T.prim_func
def func(A: T.Buffer[(14, 60), "int32"], B: T.Buffer[(14,), "int32"]):
    for i in T.serial(14):
        B[i] = 0
        for j in T.serial(60):
            B[i] = B[i] + A[i, j]
