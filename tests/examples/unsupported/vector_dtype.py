from polypad import T

# A buffer of vector dtype ("float32x4") is not supported (vectors are values, not buffer
# elements): parsing must fail at the dtype string.


@T.prim_func
def func(A: T.Buffer[(4,), "float32x4"]):
    for i in T.serial(4):
        A[i] = A[i]
