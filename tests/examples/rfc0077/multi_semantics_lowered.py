from polypad import T

# RFC 0077, Implementation options - Multiple Buffer Semantics: after
# RemoveCompileTimeAssumptions and RemoveStoreUndef.


@T.prim_func
def func(A: T.Buffer[(4, 4, 8, 8), "int32"], B: T.Buffer[(4, 4), "int32"]):
    for io, ii in T.grid(4, 4):
        B[io, ii] = 0
        for jo, ji in T.grid(8, 8):
            B[io, ii] = B[io, ii] + A[io, ii, jo, ji]
