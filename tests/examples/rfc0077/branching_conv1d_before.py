from polypad import T

# RFC 0077, New Primitive - Remove Overcompute Through Branching: function with overcompute.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(4, 4), "float32"],
):
    # RFC: as in overcompute_conv1d_after, io == 3 and ii >= 2 reads A[4, _], past A's
    # (4, 4) shape; kept as written.
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            B[io, ii] = 0.0
            for f in T.serial(3):
                B[io, ii] = B[io, ii] + A[io + (ii + f) // 4, (ii + f) % 4]

    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
