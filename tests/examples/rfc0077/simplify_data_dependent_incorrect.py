from polypad import T

# RFC 0077, Enhancement - Simplify: INCORRECT result of illegally merging the
# data-dependent conditionals (not equivalent to simplify_data_dependent_before).


@T.prim_func
def func(A: T.Buffer[16, "float32"], B: T.Buffer[16, "float32"]):
    for i in T.serial(16):
        if A[i] < 0.0:
            A[i] = A[i] + 1.0
            A[i] = 0.0
