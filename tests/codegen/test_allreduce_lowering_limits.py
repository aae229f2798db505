"""What the lowering of a cross-thread reduction (``polypad.semantics.lower_allreduce``)
refuses, and the bounds decided on its lowered form: each case a review found the
executors computing something else (or reading past a buffer) before."""

from __future__ import annotations

import numpy as np
import pytest

import analyses
import codegen
import polypad as pp
from polypad.errors import BuildError, OutOfBoundsError


def _reduction(head: str, loop: str, before: str, value: str, after: str) -> str:
    """A sum over 8 threads (or as ``loop`` says) of ``value`` into ``red[0]``."""
    return f'''
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    red = T.alloc_buffer((1,), "float32", scope="local")
{head}    for t in {loop}:
{before}        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
            T.tvm_thread_allreduce(T.uint32(1), {value}, T.bool(True), red[0], t)
        {after}
'''


def test_a_let_that_reads_memory_around_the_reduction_is_refused():
    """The split would read ``A[t]`` again after the reduction, once ``A[t]`` is 0
    (review finding: B was 36 everywhere, not ``A + 36``)."""
    func = pp.parse(_reduction("", 'T.thread_binding(8, thread="threadIdx.x")',
                               "        v = A[t]\n        A[t] = T.float32(0)\n", "v",
                               "B[t] = v + red[0]"))
    for target in ("python", "numba"):
        with pytest.raises(BuildError, match=r"sits under the let v, whose value reads A, "
                                             r"which the loop writes"):
            codegen.build(func, target=target)


def test_a_let_that_reads_memory_the_loop_does_not_write_is_read_alike_in_both_halves():
    """Layer norm's ``d = x[t] - mean``: nothing in the loop writes A, so the split reads
    the same value again after the reduction."""
    func = pp.parse(_reduction("", 'T.thread_binding(8, thread="threadIdx.x")',
                               "        v = A[t] * T.float32(2)\n", "v",
                               "B[t] = v + red[0]"))
    a = np.random.default_rng(7).integers(-4, 5, 10).astype("float32")
    for target in ("python", "numba"):
        b = np.zeros(10, "float32")
        codegen.build(func, target=target)(a.copy(), b)
        np.testing.assert_array_equal(b[:8], 2 * a[:8] + 2 * a[:8].sum(), target)


def test_private_memory_written_through_a_view_is_refused_too():
    func = pp.parse(_reduction(
        '    p = T.alloc_buffer((1,), "float32", scope="local")\n'
        '    p_1 = T.decl_buffer((1,), "float32", data=p.data, scope="local")\n',
        'T.thread_binding(8, thread="threadIdx.x")', "        p_1[0] = A[t] * T.float32(2)\n",
        "A[t]", "B[t] = p[0] + red[0]"))
    with pytest.raises(BuildError, match=r"p \(local\) is written before it and read after it"):
        codegen.build(func, target="python")


def test_a_thread_loop_that_does_not_start_at_zero_is_refused():
    func = pp.parse(_reduction("", 'T.thread_binding(2, 10, thread="threadIdx.x")', "",
                               "A[t]", "B[t] = red[0]"))
    with pytest.raises(BuildError, match=r"runs in thread loop t, which starts at 2, not at 0"):
        codegen.build(func, target="numba")


def test_the_bounds_of_a_reduction_are_decided_on_its_lowered_form():
    """``A[t + 4]`` for t up to 7 leaves A (10 elements): refused at build with the
    thread, where the Numba kernel was built unchecked and read past A's end."""
    func = pp.parse(_reduction("", 'T.thread_binding(8, thread="threadIdx.x")', "",
                               "A[t + 4]", "B[t] = red[0]"))
    with pytest.raises(OutOfBoundsError, match=r"A\[t \+ 4\]"):
        codegen.build(func, target="numba")
    inside = pp.parse(_reduction("", 'T.thread_binding(8, thread="threadIdx.x")', "",
                                 "A[t + 2]", "B[t] = red[0]"))
    kernel = codegen.build(inside, target="numba")
    assert isinstance(kernel.bounds, analyses.Proved)
    a, b = np.arange(10, dtype=np.float32), np.zeros(10, np.float32)
    kernel(a, b)
    np.testing.assert_array_equal(b[:8], np.full(8, a[2:].sum(), np.float32))
