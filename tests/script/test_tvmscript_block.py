"""The block dialect's basics, lowered as they are read.

``T.axis.*`` variables become lets that keep their source names, ``with
T.init():`` an ``if`` on the reduce variables, ``T.where`` an ``if`` around
the rest of the block, and ``T.reads``/``T.writes`` are checked against the
body, then dropped (test_tvmscript_regions.py).  Each kernel is parsed,
round-tripped, run on both executors against numpy and analysed.
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest
from tvmscript_support import arguments, roundtrip, run_both

import analyses
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.script import script

pytestmark = pytest.mark.numba

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 6), "float32"),
           C: T.Buffer((8, 6), "float32")):
    with T.block("root"):
        for i, j, k in T.grid(8, 6, 4):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def _lets(f) -> dict[str, n.Expr]:
    return {s.var.name: s.value for s in walk(f.body) if isinstance(s, n.LetStmt)}


def test_remap_reads_writes_and_init():
    f = roundtrip(MATMUL)
    lets = _lets(f)
    assert sorted(lets) == ["vi", "vj", "vk"]
    assert [v.name for v in lets.values()] == ["i", "j", "k"]
    (init,) = [s for s in walk(f.body) if isinstance(s, n.IfThenElse)]
    assert script(init.condition).strip() == "vk == 0"
    args = arguments(f)
    args[2][:] = 7.0  # T.init must overwrite what was there
    out = run_both(f, args, rtol=1e-5)
    np.testing.assert_allclose(out[2], args[0] @ args[1], rtol=1e-5, atol=1e-6)
    assert analyses.domain_touched(f, "C", "write").set.is_equal(
        isl.Set("{ C[i, j] : 0 <= i < 8 and 0 <= j < 6 }"))
    flow = analyses.dependences(f).flow
    assert not flow.is_empty()


def test_spatial_and_reduce_with_a_domain_start():
    f = roundtrip("""
        @T.prim_func
        def rowsum(A: T.Buffer((4, 8), "int32"), B: T.Buffer((4,), "int32")):
            for i, k in T.grid(4, 6):
                with T.block("S"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce((2, 8), k + 2)
                    with T.init():
                        B[vi] = 0
                    B[vi] = B[vi] + A[vi, vk]
    """)
    (init,) = [s for s in walk(f.body) if isinstance(s, n.IfThenElse)]
    assert script(init.condition).strip() == "vk == 2"
    args = arguments(f)
    out = run_both(f, args)
    assert (out[1] == args[0][:, 2:].sum(axis=1)).all()
    assert not analyses.dependences(f).flow.is_empty()


def test_where_guards_the_rest_of_the_block():
    f = roundtrip("""
        @T.prim_func
        def split(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
            for io, ii in T.grid(4, 4):
                with T.block("B"):
                    vi = T.axis.spatial(14, io * 4 + ii)
                    T.where(io * 4 + ii < 14)
                    B[vi] = A[vi] * 2.0
    """)
    assert len([s for s in walk(f.body) if isinstance(s, n.IfThenElse)]) == 1
    args = arguments(f)
    out = run_both(f, args)
    np.testing.assert_array_equal(out[1], args[0] * 2)
    touched = analyses.domain_touched(f, "B", "write")
    assert touched.set.is_equal(isl.Set("{ B[i] : 0 <= i < 14 }"))


def test_alloc_buffer_in_a_block_and_block_attr():
    f = roundtrip("""
        @T.prim_func
        def copy2(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            with T.block("root"):
                T.block_attr({"meta": 1})
                tmp = T.alloc_buffer((4,), "float32")
                for i in T.serial(4):
                    with T.block("T"):
                        vi = T.axis.S(4, i)
                        tmp[vi] = A[vi] + 1.0
                for i in T.serial(4):
                    with T.block("B"):
                        vi = T.axis.spatial(4, i)
                        B[vi] = tmp[vi] * 3.0
    """)
    assert [b.name for b in walk(f.body) if isinstance(b, n.Block)] == ["root", "T", "B"]
    args = arguments(f)
    out = run_both(f, args)
    np.testing.assert_allclose(out[1], (args[0] + 1) * 3, rtol=1e-6)


def test_unnamed_blocks_are_numbered_in_source_order():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block():
                    vi = T.axis.spatial(4, i)
                    A[vi] = A[vi] + 1.0
            for i in T.serial(4):
                with T.block():
                    A[i] = A[i] * 2.0
    """)
    assert [b.name for b in walk(f.body) if isinstance(b, n.Block)] == ["block_0", "block_1"]
    args = arguments(f)
    np.testing.assert_allclose(run_both(f, args)[0], (args[0] + 1) * 2, rtol=1e-6)


def test_a_schedule_primitive_takes_a_block_dialect_function():
    import polypad as pp
    from polypad.script import parse

    sch = pp.Schedule(parse(MATMUL))
    sch.transform_layout("C", "B", lambda k, j: [k, j // 4, j % 4], pad_value=0.0)
    assert sch.func.params[1].shape == (4, 2, 4)
    assert isinstance(analyses.check_bounds(sch.func), analyses.Proved)
    assert "B[vk, vj // 4, vj % 4]" in script(sch.func)


def test_statements_that_make_no_ir_leave_a_flat_list():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            with T.block("b"):
                A[0] = 1.0
                T.reads(A[0])
                A[1] = 2.0
                p = T.allocate([4], "float32", "global")
                A[2] = 3.0
                X = T.decl_buffer((4,), "float32", data=p)
                X[0] = A[0]
                A[3] = X[0]
    """)
    (block,) = [b for b in walk(f.body) if isinstance(b, n.Block)]
    assert isinstance(block.body, n.SeqStmt) and len(block.body.stmts) == 4
    assert isinstance(block.body.stmts[3], n.Allocate)
