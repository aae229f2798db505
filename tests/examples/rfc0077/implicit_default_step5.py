from polypad import T

# RFC 0077, Implementation options - Implicitly write default value of next operator:
# after merge_adjacent_loops and merge_complementary_conditions.
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

    for io, ii in T.grid(3, 8):
        for fi in T.serial(3):
            if 0 <= 8 * io + ii - 2 < 16 and 0 <= 8 * io + ii + fi - 2 < 18:
                B[io + (ii + fi) // 8, (ii + fi) % 8] = (
                    B[io + (ii + fi) // 8, (ii + fi) % 8] + F[fi] * A[io, ii]
                )
