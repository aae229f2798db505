from polypad import T

# RFC 0077, Utility - Merge Adjacent Loops: second loop reads an earlier iteration,
# after merging.


@T.prim_func
def func(A: T.Buffer[(16,), "float32"]):
    for i in T.serial(16):
        A[i] = 0.0
        if i > 0:
            # RFC typo: `A[i - 1] + i`; merging must not change the value, which the
            # unmerged version computes as `A[i - 1] + 1.0`.
            A[i] = A[i - 1] + 1.0
