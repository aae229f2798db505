from polypad import T

# RFC 0077, Enhancement - transform_layout: before transforming arguments A and B.


@T.prim_func
def func(A: T.Buffer[14, "float32"], B: T.Buffer[14, "float32"]):
    # RFC: an unused `B_cache = T.alloc_buffer(14, "float32")` is dropped.
    for i in T.serial(14):
        with T.block("compute"):
            B[i] = 2 * A[i]
