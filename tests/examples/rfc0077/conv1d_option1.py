from polypad import T

# RFC 0077, New Utility - Reorder Loops According to Buffer: conv1d, option 1,
# loops rewritten to match B's layout.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "int32"],
    F: T.Buffer[(3,), "int32"],
    B: T.Buffer[(4, 4), "int32"],
):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                # RFC typo: `= 0.0` on an int32 buffer.
                B[io, ii] = 0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]
