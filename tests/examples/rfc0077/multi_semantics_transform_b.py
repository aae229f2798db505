from polypad import T

# RFC 0077, Implementation options - Multiple Buffer Semantics: B transformed,
# lambda i: [i // 4, i % 4], pad_value=undef.


@T.prim_func
def func(A: T.Buffer[(4, 4, 8, 8), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii, jo, ji in T.grid(4, 4, 8, 8):
        T.assume(8 * jo + ji < 60 or A[io, ii, jo, ji] == 0)

    for io, ii, j in T.grid(4, 4, 60):
        T.assume(4 * io + ii < 14 or A[io, ii, j // 8, j % 8] == T.undef())

    for i in T.serial(14):
        B[i // 4, i % 4] = 0
        for j in T.serial(60):
            B[i // 4, i % 4] = B[i // 4, i % 4] + A[i // 4, i % 4, j // 8, j % 8]

    for io, ii in T.grid(4, 4):
        if 4 * io + ii >= 14:
            B[io, ii] = T.undef()
