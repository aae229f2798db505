from polypad import T

# RFC 0077, Implementation options - Multiple Buffer Semantics: first transformation of A,
# lambda i, j: [i // 4, i % 4, j], pad_value=undef.


@T.prim_func
def func(A: T.Buffer[(4, 4, 60), "int32"], B: T.Buffer[(14,), "int32"]):
    for io, ii, j in T.grid(4, 4, 60):
        T.assume(4 * io + ii < 14 or A[io, ii, j] == T.undef())

    for i in T.serial(14):
        B[i] = 0
        for j in T.serial(60):
            B[i] = B[i] + A[i // 4, i % 4, j]
