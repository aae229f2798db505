from polypad import T

# RFC 0077, Utility - Merge Adjacent Loops: second loop reads an earlier iteration,
# before merging.


@T.prim_func
def func(A: T.Buffer[(16,), "float32"]):
    for i in T.serial(16):
        A[i] = 0.0

    for i in T.serial(16):
        if i > 0:
            A[i] = A[i - 1] + 1.0
