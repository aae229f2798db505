from polypad import T

# RFC 0077, New Transform - Hoist Expression: original function with a let-bound condition.


@T.prim_func
def func(A: T.Buffer[(4,), "float32"]):
    # RFC typo: A is declared (4, 4) but indexed A[i]; the hoisted version declares (4,).
    for i in T.serial(4):
        is_in_bounds = i < 3
        if is_in_bounds:
            A[i] = 0.0
