from polypad import T

# RFC 0077, Implementation options - Multiple Buffer Semantics: after
# remove_branching_through_overcompute.


@T.prim_func
def func(A: T.Buffer[(4, 4, 8, 8), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii, jo, ji in T.grid(4, 4, 8, 8):
        T.assume(8 * jo + ji < 60 or A[io, ii, jo, ji] == 0)

    for io, ii, jo, ji in T.grid(4, 4, 8, 8):
        if 8 * jo + ji < 60:
            T.assume(4 * io + ii < 14 or A[io, ii, jo, ji] == T.undef())

    for io, ii in T.grid(4, 4):
        B[io, ii] = 0
        for jo, ji in T.grid(8, 8):
            B[io, ii] = B[io, ii] + A[io, ii, jo, ji]

    for io, ii in T.grid(4, 4):
        if 4 * io + ii >= 14:
            B[io, ii] = T.undef()
