from polypad import T

# RFC 0077, Implementation options - Implicitly write default value of next operator:
# after sequential_buffer_access(A).
# NOTE: from this step on the RFC writes B at physical index 8*io + ii + fi, but the step
# before computes Bi = Ai + fi - 2 = 8*io + ii + fi - 4, i.e. physical 8*io + ii + fi - 2.
# Kept as written: the steps from here on agree with each other, not with the earlier ones.


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

    for io, ii in T.grid(3, 8):
        for fi in T.serial(3):
            if 0 <= 8 * io + ii - 2 < 16 and 0 <= 8 * io + ii + fi - 2 < 18:
                B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                    B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii]
                )

    for io, ii in T.grid(3, 8):
        # RFC typo: `ii >= 6`; B (logical 18, offset 2) has padding at (2, 4) .. (2, 7),
        # as the RFC's own diagram shows.
        if (io == 0 and ii < 2) or (io == 2 and ii >= 4):
            B[io, ii] = 0.0
