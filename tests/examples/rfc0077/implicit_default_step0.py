from polypad import T

# RFC 0077, Implementation options - Implicitly write default value of next operator:
# initial compute definition (conv1d with padding 2).


@T.prim_func
def func(
    A: T.Buffer[(16,), "float32"],
    F: T.Buffer[(3,), "float32"],
    B: T.Buffer[(18,), "float32"],
):
    for Bi in T.serial(18):
        B[Bi] = 0.0
        for fi in T.serial(3):
            Ai = Bi - fi + 2
            if 0 <= Ai < 16:
                B[Bi] = B[Bi] + F[fi] * A[Ai]
