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


_CONSTANT = '''
@T.prim_func
def row_sum(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n},), "float32")):
    for i in T.serial({n}):
        B[i] = 0.0
        for j in T.serial({m}):
            B[i] = B[i] + A[i, j]
'''


def row_sum(n: int = 16384, m: int = 16384):
    """The row sum at constant sizes ``n x m`` (what :func:`schedule_cuda` takes)."""
    from polypad.script import parse

    return parse(_CONSTANT.format(n=n, m=m), filename="row_summation.py")


def schedule_cuda(func=None, *, threads: int = 256, unroll: int = 4):
    """The row sum on a GPU, as a CUDA programmer writes it; returns the ``Schedule``.

    A block per row and ``threads`` threads (a power of two): thread ``t`` sums
    columns ``t, t + threads, ...`` (a warp reads consecutive elements: coalesced),
    ``unroll`` of them per step of its loop, so that ``unroll`` loads are in
    flight at once, into a register (the ``cuda`` target keeps the thread's
    partial sum in one for the loop's length, :mod:`codegen.cuda.registers`);
    the partial sums go to shared memory (``rfactor``, ``set_scope``) and are
    added in a tree of ``log2 threads`` steps (``tree_reduce``), one barrier
    between two steps.  ``func`` is :func:`row_sum` by default; its ``m`` must be
    a multiple of ``threads * unroll``.  This reassociates the sum.
    """
    from polypad.schedule import Schedule

    sch = Schedule(func if func is not None else row_sum())
    jo, ji, jt = sch.split("j", [None, unroll, threads])
    factored = sch.rfactor(jt, 0)
    sch.reorder(jt, jo, ji)
    sch.unroll(ji)
    sch.set_scope(factored.buffer, "shared")
    (combine,) = factored.write_back
    sch.tree_reduce(combine)
    sch.bind("i", "blockIdx.x")
    (init,) = factored.init
    sch.bind(init, "threadIdx.x")
    sch.bind(jt, "threadIdx.x")
    steps = threads.bit_length() - 1
    for level in range(steps):
        sch.bind(f"{combine}_s{level}", "threadIdx.x")
    return sch
