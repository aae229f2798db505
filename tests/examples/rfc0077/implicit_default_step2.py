from polypad import T

# RFC 0077, Implementation options - Implicitly write default value of next operator:
# after transform_layout(B, lambda i: [(i+2)//8, (i+2)%8], pad_value=0).


@T.prim_func
def func(
    A: T.Buffer[(3, 8), "float32"],
    F: T.Buffer[3, "float32"],
    B: T.Buffer[(3, 8), "float32"],
):
    for io, ii in T.grid(3, 8):
        T.assume(
            (io == 0 and ii >= 2)
            or (io > 0 and io < 2)
            or (io == 2 and ii < 2)
            or A[io, ii] == 0.0
        )

    for Bi in T.serial(18):
        B[(Bi + 2) // 8, (Bi + 2) % 8] = 0.0
        for fi in T.serial(3):
            Ai = Bi - fi + 2
            if 0 <= Ai < 16:
                B[(Bi + 2) // 8, (Bi + 2) % 8] = (
                    B[(Bi + 2) // 8, (Bi + 2) % 8]
                    + F[fi] * A[(Ai + 2) // 8, (Ai + 2) % 8]
                )

    for io, ii in T.grid(3, 8):
        # RFC typo: `ii >= 6`; B (logical 18, offset 2) has padding at (2, 4) .. (2, 7),
        # as the RFC's own diagram shows.
        if (io == 0 and ii < 2) or (io == 2 and ii >= 4):
            B[io, ii] = 0.0
