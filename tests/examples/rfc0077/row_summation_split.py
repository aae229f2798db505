from polypad import T

# RFC 0077, Guide: Overcompute vs Branching -- after transform_layout and split.


@T.prim_func
def row_summation(a: T.handle, b: T.handle):
    # RFC typo: T.match_buffer(shape=..., dtype=...) without the handle.
    A = T.match_buffer(a, (16, 4, 4), "float32")
    B = T.match_buffer(b, (16,), "float32")
    for i in T.serial(16):
        B[i] = 0.0
        for j_outer, j_inner in T.grid(4, 4):
            if 4 * j_outer + j_inner < 14:
                B[i] = B[i] + A[i, j_outer, j_inner]
