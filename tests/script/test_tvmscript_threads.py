"""GPU thread axes: ``T.thread_binding``, ``T.env_thread`` and ``T.launch_thread``.

Every spelling reads as a loop whose kind is the thread tag; it prints as
``T.thread_binding``, round-trips, runs as a serial loop on both executors,
and the analyses see an ordinary loop.
"""

from __future__ import annotations

import textwrap

import islpy as isl
import numpy as np
import pytest
from tvmscript_support import arguments, parse_error, roundtrip, run_both

import analyses
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk
from polypad.script import parse, script

BINDING = """
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[bx, tx] = A[bx, tx] * 2.0
"""

SPELLINGS = {
    "thread_binding_start_stop": """
        @T.prim_func
        def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
            for bx in T.thread_binding(0, 8, thread="blockIdx.x"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    B[bx, tx] = A[bx, tx] * 2.0
        """,
    "env_thread": """
        @T.prim_func
        def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
            bx = T.env_thread("blockIdx.x")
            tx = T.env_thread("threadIdx.x")
            T.launch_thread(bx, 8)
            with T.launch_thread(tx, 4):
                B[bx, tx] = A[bx, tx] * 2.0
        """,
    "launch_thread_tag": """
        @T.prim_func
        def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
            bx = T.launch_thread("blockIdx.x", 8)
            with T.launch_thread("threadIdx.x", 4) as tx:
                B[bx, tx] = A[bx, tx] * 2.0
        """,
}


def test_thread_binding_is_a_loop_that_keeps_its_tag():
    f = roundtrip(BINDING)
    kinds = [s.kind for s in walk(f.body) if isinstance(s, n.For)]
    assert kinds == [n.ForKind.BLOCK_IDX_X, n.ForKind.THREAD_IDX_X]
    assert script(f, spelling="tir").strip() == textwrap.dedent(BINDING).strip()
    assert script(f).strip() == textwrap.dedent(BINDING).strip().replace(
        "@T.prim_func", "@T.prim_func(s_tir=True)")


def test_a_launched_axis_prints_back_as_tvm_0_27_prints_it():
    """TVM's GPU lowering prints ``T.launch_thread``, an attribute TVM's structural
    equality tells from a loop: it prints back so (``tir``: the loop it is)."""
    f = roundtrip(SPELLINGS["launch_thread_tag"])
    assert [s.launched for s in walk(f.body) if isinstance(s, n.For)] == [True, True]
    assert ('    with T.launch_thread("blockIdx.x", 8) as bx:\n'
            '        with T.launch_thread("threadIdx.x", 4) as tx:\n'
            '            B[bx, tx] = A[bx, tx] * 2.0\n') in script(f)
    assert 'for bx in T.thread_binding(8, thread="blockIdx.x"):' in script(f, spelling="tir")
    assert_structural_equal(f, parse(BINDING))
    assert "T.launch_thread" not in script(parse(BINDING))


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_every_spelling_is_the_same_loop(name):
    f = roundtrip(SPELLINGS[name])
    assert_structural_equal(f, parse(BINDING))


@pytest.mark.numba
@pytest.mark.parametrize("name", ["binding", *SPELLINGS])
def test_thread_loops_run_serially_on_both_executors(name):
    f = parse(BINDING if name == "binding" else textwrap.dedent(SPELLINGS[name]))
    args = arguments(f)
    out = run_both(f, args)
    np.testing.assert_allclose(out[1], args[0] * 2.0)


@pytest.mark.numba
def test_a_block_kernel_bound_to_threads():
    f = roundtrip("""
        @T.prim_func
        def rowsum(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
            for bx in T.thread_binding(4, thread="blockIdx.x"):
                for k in T.serial(32):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [bx, k])
                        T.reads(A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]
        """)
    args = arguments(f)
    out = run_both(f, args, rtol=1e-5)
    np.testing.assert_allclose(out[1], args[0].sum(axis=1), rtol=1e-5)
    assert analyses.domain_touched(f, "B", "write").set.is_equal(
        isl.Set("{ B[i] : 0 <= i < 4 }"))
    assert not analyses.dependences(f).flow.is_empty()


@pytest.mark.parametrize("tag", ["blockIdx.y", "blockIdx.z", "threadIdx.y", "threadIdx.z",
                                 "vthread", "vthread.x", "vthread.y", "vthread.z"])
def test_every_thread_tag_round_trips(tag):
    f = roundtrip(BINDING.replace("threadIdx.x", tag))
    assert f"T.thread_binding(4, thread=\"{tag}\")" in script(f)


@pytest.mark.parametrize("body, line, col, message", [
    ("A[0] = T.float32(T.thread_binding(4, thread=\"threadIdx.x\"))", 4, 22,
     "T.thread_binding is not a value: it makes a loop, "
     "for i in T.thread_binding(n, thread=\"threadIdx.x\")"),
    ("for i in T.thread_binding(4):\n    A[i] = 0.0", 4, 14,
     "T.thread_binding needs the argument 'thread'"),
    ("tx = T.env_thread(\"threadIdx.x\")\nty = T.launch_thread(tx, 4)", 5, 10,
     "T.launch_thread(tx, ...) launches 'tx', not 'ty'"),
    ("T.launch_thread(4, 4)", 4, 21,
     "T.launch_thread takes a T.env_thread variable or a thread tag"),
    ("tx = T.env_thread(\"laneIdx\")", 4, 23,
     "unknown thread tag 'laneIdx'; polypad reads blockIdx.x, blockIdx.y, blockIdx.z, "
     "threadIdx.x, threadIdx.y, threadIdx.z, vthread, vthread.x, vthread.y, vthread.z"),
])
def test_thread_errors(body, line, col, message):
    lines = textwrap.indent(body, " " * 12)
    text = f"""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
{lines}
        """
    err = parse_error(text)
    assert (err.lineno, err.col, err.message) == (line, col, message)
