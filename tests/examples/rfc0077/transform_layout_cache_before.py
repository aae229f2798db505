from polypad import T

# RFC 0077, Enhancement - transform_layout: before transforming A_cache and B_cache.


@T.prim_func
def func(A: T.Buffer[14, "float32"], B: T.Buffer[14, "float32"]):
    A_cache = T.alloc_buffer(14, "float32")
    for i in T.serial(14):
        with T.block("A_cache"):
            A_cache[i] = A[i]

    B_cache = T.alloc_buffer(14, "float32")
    for i in T.serial(14):
        with T.block("compute"):
            B_cache[i] = 2 * A_cache[i]

    for i in T.serial(14):
        with T.block("B_cache"):
            B[i] = B_cache[i]
