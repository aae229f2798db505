import polypad as pp
from polypad import T

# RFC 0077, Implementation options - Explicitly write next operator's desired default:
# initial producer/consumer.  (RFC: `@script.ir_module` is `@pp.ir_module` here.)


@pp.ir_module
class MyModule:
    @T.prim_func
    def producer(A: T.Buffer[(14,), "int32"]):
        for i in T.serial(14):
            A[i] = 1000 + i

    @T.prim_func
    def consumer(A: T.Buffer[(14,), "int32"], B: T.Buffer[(1,), "int32"]):
        B[0] = 0
        for i in T.serial(14):
            B[0] = B[0] + A[i]
