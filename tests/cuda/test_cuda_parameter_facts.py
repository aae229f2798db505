"""The cuda build reads an index under the function's top-level parameter assumptions,
as the barrier plan of the function as written does.

``S[T.min(tx + 2, n - 1)]`` over an ``int8`` ``n`` may wrap (``n - 1`` at
``n = -128``), and the model refuses the index (``NotAffineError``).  Under
``T.assume(3 <= n and n <= 8)`` before the kernel it cannot wrap where the
statement runs (:mod:`polypad.model.parameter_facts`).  Lowering removes the
assumptions, so the cuda target lowers keeping the top-level ones' facts over
the parameters (:func:`~polypad.semantics.remove_assume.remove_assume_keeping_facts`),
plans its barriers with them and emits nothing for them.  Each build is checked
by its one barrier, by enumerating every thread at several ``n`` (and failing
without the barrier), and by running it in the simulator against the
reference executor; a fact that is not certain to have run before the kernel
leaves the refusal as it was.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from cuda_kernels import run_both
from gpu_enumeration import check_by_enumeration

import codegen
from analyses.gpu_sync import BarrierPlan, plan_barriers
from polypad.errors import BuildError, NotAffineError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.script import parse
from polypad.semantics.remove_assume import remove_assume_keeping_facts

ASSUMED = "T.assume(3 <= n and n <= 8)"
INDEX = "T.max(T.min(tx + T.int8(2), n - T.int8(1)), T.int8(0))"

# {head} goes before the kernel, {middle} between the two launches, {tail} after them.
TEXT = '''
@T.prim_func
def f(n: T.int8, A: T.Buffer((2, 8), "int32"), B: T.Buffer((8,), "int32"),
      C: T.Buffer((2, 8), "int32")):
    {head}
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        B[tx] = tx
    {middle}
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        S = T.alloc_buffer((8,), "int32", scope="shared")
        for tx in T.thread_binding(T.int8(8), thread="threadIdx.x"):
            S[tx] = A[bx, tx] * 3 + 1
        for tx in T.thread_binding(T.int8(8), thread="threadIdx.x"):
            C[bx, tx] = S[tx] + S[INDEX] + B[tx]
    {tail}
'''.replace("INDEX", INDEX)


def program(head: str = "", middle: str = "", tail: str = "") -> n.PrimFunc:
    return parse(TEXT.format(head=head, middle=middle, tail=tail))


def _the_index(func: n.PrimFunc) -> n.Expr:
    return next(x for x in _walk_loads(func) if x.buffer.name == "S"
                and not isinstance(x.indices[0], n.Var)).indices[0]


def _walk_loads(func):
    from polypad.ir.visitor import walk

    return [x for x in walk(func.body) if isinstance(x, n.BufferLoad)]


@pytest.fixture(scope="module")
def kernel():
    return codegen.build(program(head=ASSUMED), target="cuda")


def test_the_assumed_kernel_builds_with_one_barrier_between_the_tile_and_its_readers(kernel):
    source = kernel.source
    assert source.count("cuda.syncthreads()") == 1
    store = re.search(r"S\[tx_\d\] = np.int32", source).start()
    assert store < source.index("cuda.syncthreads()") < source.index("C[bx, ")
    # The fact (launch 0) runs as nothing: a kernel for each of the two others.
    assert "KERNELS = ((kernel_1, launch_1), (kernel_2, launch_2))" in source
    assert "assume" not in source


@pytest.mark.parametrize("value", [3, 5, 8])
def test_the_plan_orders_every_pair_by_enumeration(kernel, value):
    plan = check_by_enumeration(kernel.func, params={"n": value})
    assert plan.count == 1
    with pytest.raises(AssertionError):
        check_by_enumeration(kernel.func, drop=True, params={"n": value})


@pytest.mark.parametrize("value", [3, 5, 8])
def test_the_kernel_computes_what_the_reference_does(value):
    rng = np.random.default_rng(value)
    args = [np.int8(value), rng.integers(-9, 10, (2, 8)).astype("int32"),
            np.zeros(8, "int32"), np.zeros((2, 8), "int32")]
    gpu, ref = run_both(program(head=ASSUMED), args)
    for got, want in zip(gpu[1:], ref[1:], strict=True):
        np.testing.assert_array_equal(got, want)
    assert gpu[3].any()


def test_the_build_accepts_what_the_plan_of_the_function_as_written_accepts():
    assert isinstance(plan_barriers(program(head=ASSUMED)), BarrierPlan)
    # Between the two launches the fact still comes before every instance it covers.
    middle = codegen.build(program(middle=ASSUMED), target="cuda")
    assert middle.source.count("cuda.syncthreads()") == 1


@pytest.mark.parametrize("where", ["none", "tail"])
def test_without_a_fact_before_the_kernel_the_index_is_refused_as_before(where):
    func = program(tail=ASSUMED if where == "tail" else "")
    # The evidence: the index, its first wrapping point and the access.
    wraps = re.escape("T.max(T.min(tx + 2, n - 1), 0) may wrap around its int8 range: "
                      "n - 1 = -129 at bx = 0, tx = 0, n = -128 (in index 0 of "
                      "S[T.max(T.min(tx + 2, n - 1), 0)]")
    with pytest.raises(NotAffineError, match=wraps) as build_error:
        codegen.build(func, target="cuda")
    assert_structural_equal(build_error.value.expr, _the_index(func))
    with pytest.raises(NotAffineError) as plan_error:
        plan_barriers(func)
    assert_structural_equal(plan_error.value.expr, _the_index(func))


def test_checking_assumptions_is_refused_by_the_cuda_target():
    with pytest.raises(BuildError, match="does not check T.assume at run time"):
        codegen.build(program(head=ASSUMED), target="cuda", check_assumptions=True)


def test_lowering_keeps_only_the_top_level_facts_over_the_parameters():
    func = parse('''
@T.prim_func
def g(n: T.int32, A: T.Buffer((8,), "int32")):
    T.assume(0 < n and A[0] == 0 and n <= 8)
    T.assume(A[1] == 0)
    for i in T.serial(n):
        T.assume(n < 6)
        A[i] = i
    if n < 4:
        T.assume(n > 1)
        A[0] = 1
''')
    expected = parse('''
@T.prim_func
def g(n: T.int32, A: T.Buffer((8,), "int32")):
    T.assume(0 < n and n <= 8)
    for i in T.serial(n):
        A[i] = i
    if n < 4:
        A[0] = 1
''')
    assert_structural_equal(remove_assume_keeping_facts(func), expected)
