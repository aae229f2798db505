from polypad import T

# RFC 0077, New Transform - Reduce Loop Extents: after HoistExpression (boolean expressions).


@T.prim_func
def func(A: T.Buffer[(4, 4), "float32"]):
    for i in T.serial(4):
        if i == 0:
            for j in T.serial(4):
                if j < 2:
                    A[i, j] = 0.0
