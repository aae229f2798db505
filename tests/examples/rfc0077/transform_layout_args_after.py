from polypad import T

# RFC 0077, Enhancement - transform_layout: arguments A and B transformed,
# pad_value=-1 (assumed on input A) and pad_value=-2 (written to output B).


@T.prim_func
def func(A: T.Buffer[(4, 4), "float32"], B: T.Buffer[(4, 4), "float32"]):
    # Pad values written as float literals (-1 -> -1.0): the buffers are float32.
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == -1.0)

    # RFC typo: `B[i] = 2 * A[i]` was not rewritten for the (4, 4) layout.
    for i in T.serial(14):
        with T.block("compute"):
            B[i // 4, i % 4] = 2.0 * A[i // 4, i % 4]

    for io, ii in T.grid(4, 4):
        with T.block("B_cache_padding"):
            if 4 * io + ii >= 14:
                B[io, ii] = -2.0
