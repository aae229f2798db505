from polypad import T

# RFC 0077, New Primitive - Remove Branching Through Overcompute: B transformed,
# pad_value=0.0.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(4, 4), "float32"],
):
    with T.block("compute"):
        for i in T.serial(14):
            B[i // 4, i % 4] = 0.0
            for f in T.serial(3):
                B[i // 4, i % 4] = B[i // 4, i % 4] + A[(i + f) // 4, (i + f) % 4]

        for io, ii in T.grid(4, 4):
            if io == 3 and ii >= 2:
                B[io, ii] = 0.0
