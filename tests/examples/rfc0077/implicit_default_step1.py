from polypad import T

# RFC 0077, Implementation options - Implicitly write default value of next operator:
# after transform_layout(A, lambda i: [(i+2)//8, (i+2)%8], pad_value=0).


@T.prim_func
def func(
    A: T.Buffer[(3, 8), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(18,), "float32"],
):
    for io, ii in T.grid(3, 8):
        T.assume(
            (io == 0 and ii >= 2)
            or (io > 0 and io < 2)
            or (io == 2 and ii < 2)
            or A[io, ii] == 0.0
        )

    for Bi in T.serial(18):
        B[Bi] = 0.0
        for fi in T.serial(3):
            Ai = Bi - fi + 2
            if 0 <= Ai < 16:
                B[Bi] = B[Bi] + F[fi] * A[(Ai + 2) // 8, (Ai + 2) % 8]
