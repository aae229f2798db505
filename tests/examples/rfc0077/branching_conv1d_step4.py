from polypad import T

# RFC 0077, New Primitive - Remove Overcompute Through Branching: step 4, simplify.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(4, 4), "float32"],
):
    for io, ii in T.grid(4, 4):
        if io < 3 or (io == 3 and ii < 2):
            B[io, ii] = 0.0

            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]

    for io, ii in T.grid(4, 4):
        if io == 3 and ii >= 2:
            B[io, ii] = 0.0
