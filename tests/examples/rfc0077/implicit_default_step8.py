from polypad import T

# RFC 0077, Implementation options - Implicitly write default value of next operator:
# hoist_expressions('boolean_expressions') part 2, "simplified for readability".
# NOTE: the RFC rewrites `not a and not b` as `(not a) or (not b)` here (De Morgan gives
# `and`).  Kept as written, since part 3 builds on it; the extra iterations it admits
# only read A's padding, which the T.assume says is 0.0, so results agree when that holds.
# (B index: see implicit_default_step3.)


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

    for io, ii in T.grid(3, 8):
        B[io, ii] = 0.0

    for io in T.serial(3):
        if io == 0:
            for ii in T.serial(8):
                for fi in T.serial(3):
                    if (ii >= 2) or (ii + fi >= 2):
                        B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                            B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii]
                        )
        elif io == 2:
            for ii in T.serial(8):
                for fi in T.serial(3):
                    if (ii < 2) or (ii + fi < 4):
                        B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                            B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii]
                        )
        else:
            for ii in T.serial(8):
                for fi in T.serial(3):
                    B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                        B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii]
                    )
