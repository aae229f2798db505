from polypad import T

# RFC 0077, New Transform - Hoist Expression: "incorrectly hoisted by HoistIfThenElse".
# T.var(...) declarations are not supported: parsing must fail at the T.var call.
# (The RFC's `-> None` annotation is dropped so that T.var is the only unsupported construct.)


@T.prim_func
def func(A: T.Buffer[(4,), "float32"]):
    is_in_bounds = T.var("bool")
    if is_in_bounds:
        for i in T.serial(4):
            is_in_bounds = i < 3
            A[i] = 0.0
