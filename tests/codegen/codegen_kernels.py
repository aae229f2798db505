"""The functions the codegen tests build, in script text."""

from __future__ import annotations

from polypad.ir.nodes import PrimFunc
from polypad.script import parse


def row_summation() -> PrimFunc:
    return parse('''
@T.prim_func
def row_summation(A: T.Buffer((5, 7), "float32"), B: T.Buffer((5,), "float32")):
    for i in T.serial(5):
        B[i] = 0.0
        for j in T.serial(7):
            B[i] = B[i] + A[i, j]
''')


def elementwise() -> PrimFunc:
    return parse('''
@T.prim_func
def elementwise(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        B[i] = A[i] * 2.0 + 1.0
''')


def conv1d() -> PrimFunc:
    """RFC 0077's conv1d with padding 2: a let and a guard."""
    return parse('''
@T.prim_func
def conv1d(A: T.Buffer((16,), "float32"), F: T.Buffer((3,), "float32"),
           B: T.Buffer((18,), "float32")):
    for Bi in T.serial(18):
        B[Bi] = 0.0
        for fi in T.serial(3):
            Ai = Bi - fi + 2
            if 0 <= Ai < 16:
                B[Bi] = B[Bi] + F[fi] * A[Ai]
''')


def parallel_vectorized() -> PrimFunc:
    """A parallel loop with a nonzero start around a vectorized loop."""
    return parse('''
@T.prim_func
def parallel_vectorized(A: T.Buffer((6, 8), "float32"), B: T.Buffer((6, 8), "float32")):
    for i in T.parallel(1, 6):
        for j in T.vectorized(8):
            B[i, j] = A[i, j] * A[i, j] + T.float32(i)
''')


def unrolled() -> PrimFunc:
    return parse('''
@T.prim_func
def unrolled(A: T.Buffer((4, 4), "int32"), B: T.Buffer((4, 3), "int32")):
    for i in T.serial(4):
        for j in T.unroll(3):
            B[i, j] = A[i, j + 1] - A[i, j]
''')


def symbolic() -> PrimFunc:
    """Extents given by the scalar parameter ``n``."""
    return parse('''
@T.prim_func
def symbolic(n: T.int32, A: T.Buffer((n, 3), "float32"), B: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        B[i] = A[i, 0] + A[i, 2] * T.float32(n)
''')


def expressions() -> PrimFunc:
    """Select, min/max, casts, math and a let expression under a guard."""
    return parse('''
@T.prim_func
def expressions(A: T.Buffer((10,), "float32"), B: T.Buffer((10, 6), "float32")):
    for i in T.serial(10):
        B[i, 0] = T.if_then_else(A[i] > 0.5, A[i], 0.0 - A[i])
        B[i, 1] = T.min(A[i], 0.5) + T.max(A[i], 0.25)
        B[i, 2] = T.float32(T.int32(A[i] * 10.0) // 3)
        B[i, 3] = (T.exp(A[i]) + T.sqrt(A[i]) + T.sigmoid(A[i]) + T.pow(A[i], 2.0)
                   + T.abs(0.0 - A[i]))
        B[i, 4] = T.if_then_else(i < 9, T.let(x, A[i + 1], x * x), -1.0)
        B[i, 5] = T.float32(not A[i] < 0.5 or i == 3)
''')


def floor_division() -> PrimFunc:
    """Integer // and % with negative operands and divisors, int32 and int64."""
    return parse('''
@T.prim_func
def floor_division(N: T.Buffer((16,), "int32"), D: T.Buffer((16,), "int32"),
                   B: T.Buffer((16, 6), "int32"), C: T.Buffer((16, 2), "int64")):
    for i in T.serial(16):
        B[i, 0] = (i - 7) // 3
        B[i, 1] = (i - 7) % 3
        B[i, 2] = (i - 7) // -3
        B[i, 3] = (i - 7) % -3
        B[i, 4] = N[i] // D[i]
        B[i, 5] = N[i] % D[i]
        C[i, 0] = T.int64(N[i]) * T.int64(1000000000) // T.int64(D[i])
        C[i, 1] = T.int64(N[i]) * T.int64(1000000000) % T.int64(D[i])
''')


def temporary() -> PrimFunc:
    """An allocated temporary: a prefix sum through a scratch buffer."""
    return parse('''
@T.prim_func
def temporary(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T_ = T.alloc_buffer((9,), "float64")
    for i in T.serial(8):
        T_[i + 1] = T_[i] + T.float64(A[i])
    for k in T.serial(8):
        B[k] = T.float32(T_[k + 1])
''')


def padded() -> PrimFunc:
    """RFC 0077 style padding: assumptions and undef stores that lowering removes."""
    return parse('''
@T.prim_func
def padded(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for io, ii in T.grid(4, 4):
        T.assume(4 * io + ii < 14 or A[io, ii] == T.undef())
    for jo, ji in T.grid(4, 4):
        if 4 * jo + ji < 14:
            B[jo, ji] = A[jo, ji] * 2.0
        else:
            B[jo, ji] = T.undef()
''')


def scratch() -> PrimFunc:
    """Vectorized loops that use an outer let, a scalar parameter and a buffer
    allocated in a parallel loop, and an unrolled loop around one."""
    return parse('''
@T.prim_func
def scratch(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"), n: T.int32):
    for i in T.parallel(4):
        S = T.alloc_buffer((8,), "float32")
        scale = T.float32(i + n)
        for j in T.vectorized(8):
            S[j] = A[i, j] * scale
        for k in T.unroll(2):
            for j2 in T.vectorized(4):
                B[i, k * 4 + j2] = S[k * 4 + j2] + T.float32(k)
''')
