# RFC 0077, "Overcompute vs Branching": the sum over each row of A.
# The RFC fixes the shape at (16, 14); here the extents are scalar
# parameters, so one kernel serves the RFC's size and the demo's 4096 x 4094.
from polypad import T


@T.prim_func
def row_summation(a: T.handle, b: T.handle, n: T.int32, m: T.int32):
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.serial(n):
        B[i] = 0.0
        for j in T.serial(m):
            B[i] = B[i] + A[i, j]


def schedule(func=None, *, lanes: int = 16):
    """The row sum scheduled for the CPU: rows in parallel, each row summed in
    ``lanes`` partial sums that run in vector lanes; returns the ``Schedule``.

    ``rfactor`` is where the sum is reassociated (lane ``l`` adds columns
    ``l, l + lanes, ...``; the lanes are added at the end); the columns past the
    last whole group of ``lanes`` are added after, in order.  The partial sums
    are a buffer of ``lanes`` elements inside the row loop, which the Numba
    target keeps on the stack, in one vector register.
    """
    from polypad.schedule import Schedule

    sch = Schedule(func if func is not None else row_summation)
    _, lane = sch.split("j", [None, lanes], tail="partition")
    sch.rfactor(lane)
    sch.parallel("i")
    sch.vectorize(lane)
    return sch
