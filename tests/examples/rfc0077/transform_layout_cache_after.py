from polypad import T

# RFC 0077, Enhancement - transform_layout: A_cache and B_cache transformed,
# pad_value=-1 and pad_value=-2.


@T.prim_func
def func(A: T.Buffer[14, "float32"], B: T.Buffer[14, "float32"]):
    # RFC typo: the caches are still allocated with shape 14; transformed shape is (4, 4).
    A_cache = T.alloc_buffer((4, 4), "float32")
    for i in T.serial(14):
        with T.block("A_cache"):
            A_cache[i // 4, i % 4] = A[i]

    # Pad values written as float literals (-1 -> -1.0): the buffer is float32.
    for io, ii in T.grid(4, 4):
        with T.block("A_cache_padding"):
            if 4 * io + ii >= 14:
                A_cache[io, ii] = -1.0

    B_cache = T.alloc_buffer((4, 4), "float32")
    for i in T.serial(14):
        with T.block("compute"):
            B_cache[i // 4, i % 4] = 2 * A_cache[i // 4, i % 4]

    for io, ii in T.grid(4, 4):
        with T.block("B_cache_padding"):
            if 4 * io + ii >= 14:
                B_cache[io, ii] = -2.0

    for i in T.serial(14):
        with T.block("B_cache"):
            B[i] = B_cache[i // 4, i % 4]
