from polypad import T

# RFC 0077, New Transform - Reduce Loop Extents: original function.


@T.prim_func
def func(A: T.Buffer[(4, 4), "float32"]):
    for i, j in T.grid(4, 4):
        if i == 0 and j < 2:
            A[i, j] = 0.0
