from polypad import T

# RFC 0077, New Primitive - Remove Branching Through Overcompute: after
# remove_branching_through_overcompute.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(4, 4), "float32"],
):
    # RFC: for io == 3, ii >= 2 the loop reads A[4, _], past A's (4, 4) shape.  The RFC's
    # argument only covers B (those writes are overwritten below); the A read is kept as
    # written, so this example can only be run with an A of at least 5 rows.
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]

        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
