"""TVM's lowered GPU buffers where the cuda target's launch model reads them
(:mod:`polypad.transform.launch_buffers`): a view declared at the top goes into each
launch that uses it, and a global temporary allocated in a launch (TVM's argmax
lowering writes one) is hoisted above the launches where no value crosses the
iterations it leaves; where one does, the build is refused as before."""

from __future__ import annotations

import cuda_kernels as K
import numpy as np
import pytest

import codegen
import polypad as pp
from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.transform.launch_buffers import hoist_launch_globals, sink_top_views

TWO_LAUNCHES = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((8,), "float32")):
    A_flat = T.decl_buffer((16,), "float32", data=A.data)
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        tmp = T.alloc_buffer((4,), "float32")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            if tx == 0:
                tmp[bx] = A_flat[bx * 4 + 1] * T.float32(2)
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            if tx == 0:
                B[bx] = tmp[bx] + T.float32(1)
    for i in range(4):
        B[i + 4] = A[0, i]
'''

# The view in each launch; the temporary above both (the host allocates it).
EXPECTED = '''
@T.prim_func
def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((8,), "float32")):
    tmp = T.alloc_buffer((4,), "float32")
    with T.decl_buffer((16,), "float32", data=A.data) as A_flat:
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                if tx == 0:
                    tmp[bx] = A_flat[bx * 4 + 1] * T.float32(2)
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                if tx == 0:
                    B[bx] = tmp[bx] + T.float32(1)
    for i in range(4):
        B[i + 4] = A[0, i]
'''


def test_views_go_into_their_launches_and_the_temporary_above_them():
    func = pp.parse(TWO_LAUNCHES)
    assert_structural_equal(hoist_launch_globals(sink_top_views(func)), pp.parse(EXPECTED))


@pytest.mark.parametrize("second", ["A[0, i]", "A_flat[i]"])
def test_the_rewritten_function_builds_and_computes_the_reference_result(second):
    """Each kernel declares the view it reads (a view owns no memory)."""
    func = pp.parse(TWO_LAUNCHES.replace("B[i + 4] = A[0, i]", f"B[i + 4] = {second}"))
    args = [np.random.default_rng(5).standard_normal((4, 4)).astype("float32"),
            np.zeros(8, "float32")]
    gpu, ref = K.run_both(func, args)
    np.testing.assert_array_equal(gpu[1], ref[1])
    source = codegen.build(func, target="cuda").source
    # One per kernel (lowering reads A through its view in both).
    assert source.count("A_flat = A.reshape((16,))") == 2
    assert "def kernel_0(A, B, tmp):" in source


def test_a_temporary_whose_value_crosses_blocks_stays_and_is_refused():
    """Fresh in each block, ``tmp[bx - 1]`` reads zero; hoisted, it would read what the
    block before wrote: not the same program, so nothing moves."""
    text = TWO_LAUNCHES.replace("B[bx] = tmp[bx] + T.float32(1)",
                                "B[bx] = tmp[(bx + 3) % 4] + T.float32(1)")
    func = pp.parse(text)
    assert_structural_equal(hoist_launch_globals(func), func)
    with pytest.raises(BuildError, match="buffer 'tmp' is allocated in global memory "
                                         "inside a kernel"):
        codegen.build(func, target="cuda")


# Each block writes all of its own tmp (one element a thread), then reads a neighbour's.
BLOCK_LOCAL = '''
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        tmp = T.alloc_buffer((4,), "float32")
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            tmp[tx] = A[bx * 4 + tx]
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx * 4 + tx] = tmp[(tx + 1) % 4]
'''


def test_a_temporary_every_block_writes_whole_stays_and_is_refused():
    """No value crosses the blocks (each reads what it wrote), but every block writes
    ``tmp[0]``: hoisted, the blocks would share what each had its own of, and the
    launch model would refuse a race the source does not have.  Nothing moves; the
    refusal is the one for a global allocation in a kernel."""
    func = pp.parse(BLOCK_LOCAL)
    assert_structural_equal(hoist_launch_globals(func), func)
    with pytest.raises(BuildError, match="buffer 'tmp' is allocated in global memory "
                                         "inside a kernel"):
        codegen.build(func, target="cuda")


def test_the_hoisted_block_local_temporary_carries_output_and_anti_dependences():
    """Hoisted, no flow crosses ``bx`` (why the flow test alone let it move), but the
    writes of one element by two blocks do, with the instances that meet."""
    from analyses.allocation_scope import carried_dependence, carried_flow

    hoisted = pp.parse(BLOCK_LOCAL.replace('        tmp = T.alloc_buffer((4,), "float32")\n',
                                           "").replace(
        "    for bx", '    tmp = T.alloc_buffer((4,), "float32")\n    for bx', 1))
    alloc = hoisted.body
    assert isinstance(alloc, n.Allocate) and alloc.buffer.name == "tmp"
    bx = [s for s in walk(hoisted.body) if isinstance(s, n.For) and s.var.name == "bx"]
    assert carried_flow(hoisted, alloc.buffer, bx) is None
    anti = carried_dependence(hoisted, alloc.buffer, bx)
    assert anti.description == ("S0(bx=1, tx=1) writes tmp[1], which S1(bx=0, tx=0) "
                                "reads in another iteration of loop 'bx'")
    output = carried_dependence(hoisted, alloc.buffer, bx, ("output",))
    assert output.description == ("S0(bx=1, tx=0) writes tmp[0], which S0(bx=0, tx=0) "
                                  "writes in another iteration of loop 'bx'")
