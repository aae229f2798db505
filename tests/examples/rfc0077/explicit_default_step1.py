import polypad as pp
from polypad import T

# RFC 0077, Implementation options - Explicitly write next operator's desired default:
# after transform_layout(A, pad_value=0).


@pp.ir_module
class MyModule:
    @T.prim_func
    def producer(A: T.Buffer[(4, 4), "int32"]):
        for i in T.serial(14):
            A[i // 4, i % 4] = 1000 + i

        for io, ii in T.grid(4, 4):
            if 4 * io + ii >= 14:
                A[io, ii] = 0

    @T.prim_func
    def consumer(A: T.Buffer[(4, 4), "int32"], B: T.Buffer[(1,), "int32"]):
        for io, ii in T.grid(4, 4):
            T.assume(4 * io + ii < 14 or A[io, ii] == 0)

        B[0] = 0
        for i in T.serial(14):
            B[0] = B[0] + A[i // 4, i % 4]
