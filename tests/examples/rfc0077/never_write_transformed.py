from polypad import T

# RFC 0077, Implementation options - Never write to transformation padding:
# after transform_layout.


@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"]):
    for i in T.serial(14):
        A[i // 4, i % 4] = 42
