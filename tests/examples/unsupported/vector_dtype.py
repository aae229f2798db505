from polypad import T

# Vector dtypes ("float32x4") are deliberately not supported: parsing must fail at the
# dtype string.


@T.prim_func
def func(A: T.Buffer[(4,), "float32x4"]):
    for i in T.serial(4):
        A[i] = A[i]
