from polypad import T

# RFC 0077, Utility - Merge Adjacent Loops: stencil reading a later iteration
# (merging is not valid).


@T.prim_func
def func(A: T.Buffer[(16,), "float32"]):
    for i in T.serial(16):
        # RFC: `A[i] = i` stores an int32 loop counter into a float32 buffer.
        A[i] = T.Cast("float32", i)

    for i in T.serial(16):
        if 0 < i < 15:
            A[i] = A[i - 1] + A[i] + A[i + 1]
