from polypad import T

# RFC 0077, New Utility - Reorder Loops According to Buffer: conv1d, A and B transformed.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "int32"],
    F: T.Buffer[(3,), "int32"],
    B: T.Buffer[(4, 4), "int32"],
):
    with T.block("compute"):
        for i in T.serial(14):
            # RFC typo: `= 0.0` on an int32 buffer.
            B[i // 4, i % 4] = 0
            for f in T.serial(3):
                B[i // 4, i % 4] = B[i // 4, i % 4] + F[f] * A[(i + f) // 4, (i + f) % 4]
