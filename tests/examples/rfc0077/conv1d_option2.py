from polypad import T

# RFC 0077, New Utility - Reorder Loops According to Buffer: conv1d, option 2,
# loops rewritten to match A's layout.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "int32"],
    F: T.Buffer[(3,), "int32"],
    B: T.Buffer[(4, 4), "int32"],
):
    with T.block("init_compute"):
        for i in T.serial(14):
            # RFC typo: `= 0.0` on an int32 buffer.
            B[i // 4, i % 4] = 0

    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            for f in T.serial(3):
                if 0 <= 4 * io + ii - f < 14:
                    B[io + (ii - f) // 4, (ii - f) % 4] = (
                        B[io + (ii - f) // 4, (ii - f) % 4] + F[f] * A[io, ii]
                    )
