from polypad import T

# RFC 0077, New Primitive - Remove Branching Through Overcompute: A transformed.


@T.prim_func
def func(
    A: T.Buffer[(4, 4), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(14,), "float32"],
):
    with T.block("compute"):
        for i in T.serial(14):
            B[i] = 0.0
            for f in T.serial(3):
                B[i] = B[i] + A[(i + f) // 4, (i + f) % 4]
