from polypad import T

# RFC 0077, Unresolved questions: a transformed buffer aliasing a flat backing allocation.
# A buffer declared over another one's data is not supported: parsing must fail at
# the data= argument.


@T.prim_func
def func(B: T.Buffer[(14,), "float32"]):
    A_backing = T.alloc_buffer(14, "float32")
    A = T.decl_buffer([4, 4], data=A_backing.data)
    for i in range(14):
        B[i] = A[i // 4, i % 4]
