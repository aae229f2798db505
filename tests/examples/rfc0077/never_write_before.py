from polypad import T

# RFC 0077, Implementation options - Never write to transformation padding: initial.


@T.prim_func
def func(A: T.Buffer[(14,), "int32"]):
    for i in T.serial(14):
        A[i] = 42
