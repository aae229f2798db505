from polypad import T

# RFC 0077, Implementation options - Apply operator element-wise over the transformation
# padding: after transform_layout(B, pad_value=undef).


@T.prim_func
def func(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == T.undef())

    for i in T.serial(14):
        B[i // 4, i % 4] = 2 * A[i // 4, i % 4]

    for io, ii in T.grid(4, 4):
        if 4 * io + ii >= 14:
            B[io, ii] = T.undef()
