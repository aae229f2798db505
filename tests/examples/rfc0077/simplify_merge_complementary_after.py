from polypad import T

# RFC 0077, Enhancement - Simplify: complementary conditionals, after merging.


@T.prim_func
def func(A: T.Buffer[(4, 4), "float32"], B: T.Buffer[(4, 4), "float32"]):
    # RFC typo: `A[i]` / `B[i]` on (4, 4) buffers; the element is [i, j].
    for i, j in T.grid(4, 4):
        if 4 * i + j < 14:
            A[i, j] = 0.0
            B[i, j] = 3.0
        else:
            A[i, j] = 1.0
            B[i, j] = 2.0
