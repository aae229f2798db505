import polypad as pp
from polypad import T

# RFC 0077, Implementation options - Explicitly write next operator's desired default:
# after simplify (complementary conditionals merged).


@pp.ir_module
class MyModule:
    @T.prim_func
    def producer(A: T.Buffer[(4, 4), "int32"]):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                # RFC typo: `1000 + i`, where i is no longer bound.
                A[io, ii] = 1000 + 4 * io + ii
            else:
                A[io, ii] = 0

    @T.prim_func
    def consumer(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(1,), "int32"]):
        for io, ii in T.grid(4, 4):
            T.assume(4 * io + ii < 14 or A[io, ii] == 0)

        B[0] = 0
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                B[0] = B[0] + A[io, ii]
