from polypad import T

# RFC 0077, New Transform - Reduce Loop Extents: after reducing serial loop extents.


@T.prim_func
def func(A: T.Buffer[(4, 4), "float32"]):
    i = 0
    for j in T.serial(2):
        A[i, j] = 0.0
