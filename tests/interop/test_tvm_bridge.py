"""polypad.tvm: from_tvm and to_tvm against the real TVM 0.27, and their errors."""

from __future__ import annotations

import builtins

import pytest

import polypad as pp
from polypad import tvm as pptvm
from polypad.errors import ArgumentTypeError, MissingDependencyError, TVMInteropError
from polypad.ir import nodes as n
from polypad.ir.structural import assert_structural_equal
from polypad.ir.visitor import walk

MATMUL = """
@T.prim_func(s_tir=True)
def main(A: T.Buffer((8, 12), "float32"), B: T.Buffer((12, 16), "float32"),
         C: T.Buffer((8, 16), "float32")):
    T.func_attr({"tirx.noalias": True})
    for i, j, k in T.grid(8, 16, 12):
        with T.sblock("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
"""


def te_matmul():
    from tvm import te

    A = te.placeholder((8, 12), name="A")
    B = te.placeholder((12, 16), name="B")
    k = te.reduce_axis((0, 12), name="k")
    C = te.compute((8, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def test_from_tvm_reads_a_te_function_with_its_block_header():
    f = pptvm.from_tvm(te_matmul())
    assert_structural_equal(f, pp.parse(MATMUL))
    (block,) = [s for s in walk(f.body) if isinstance(s, n.Block)]
    assert [(a.var.name, a.kind) for a in block.header.axes] == [
        ("v_i", "S"), ("v_j", "S"), ("v_k", "R")]
    assert block.header.init and [r.buffer.name for r in block.header.reads] == ["A", "B"]


def test_to_tvm_gives_what_tvm_parses_from_its_own_text():
    import tvm_ffi
    from tvm.script import from_source

    ours = pptvm.to_tvm(pp.parse(MATMUL))
    assert tvm_ffi.structural_equal(ours, te_matmul().with_attr("global_symbol", "main"))
    assert tvm_ffi.structural_equal(ours, from_source(MATMUL))


def test_a_module_goes_both_ways():
    import tvm
    import tvm_ffi

    mod = tvm.IRModule({"main": te_matmul()})
    ours = pptvm.from_tvm(mod)
    assert isinstance(ours, n.IRModule) and [f.name for f in ours.funcs] == ["main"]
    back = pptvm.to_tvm(ours)
    assert isinstance(back, tvm.IRModule)
    assert tvm_ffi.structural_equal(back, tvm.script.from_source(mod.script()))


def test_from_tvm_takes_tvm_objects_only():
    with pytest.raises(TVMInteropError, match="takes a tvm.tirx.PrimFunc or a tvm.IRModule, "
                                              "got str"):
        pptvm.from_tvm(MATMUL)


def test_to_tvm_quotes_what_tvm_refuses():
    # Size parameters in an order TVM 0.27 cannot declare (it declares a size at its
    # first use in the shapes: n before m) stay parameters, which TVM does not read.
    f = pp.parse("""
@T.prim_func
def f(A: T.Buffer((n, m), "float32"), m: T.int32, n: T.int32):
    for i, j in T.grid(n, m):
        A[i, j] = 1.0
""")
    with pytest.raises(TVMInteropError) as info:
        pptvm.to_tvm(f)
    assert str(info.value).startswith(
        "TVM 0.27 refused polypad's script of 'f': error: name 'n' is not defined\n")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    # In the order of their first use they are sizes, and TVM reads them.
    g = pp.parse(pp.script(f).replace("m: T.int32, n: T.int32", "n: T.int32, m: T.int32"))
    assert 'def f(A: T.Buffer(("n", "m"), "float32")):' in pp.script(g)
    assert pptvm.to_tvm(g).params[0].name == "A"
    with pytest.raises(ArgumentTypeError):
        pptvm.to_tvm("text")


def test_without_tvm_the_error_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_tvm(name, *args, **kwargs):
        if name == "tvm" or name.startswith("tvm."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    f = pp.parse(MATMUL)
    monkeypatch.setattr(builtins, "__import__", no_tvm)
    for call in (lambda: pptvm.to_tvm(f), lambda: pptvm.from_tvm(None)):
        with pytest.raises(MissingDependencyError) as info:
            call()
        assert str(info.value) == (
            "polypad.tvm needs TVM 0.27, which is not installed (No module named 'tvm'); "
            'install it with: pip install "polypad[tvm]"')
    monkeypatch.undo()
    assert issubclass(MissingDependencyError, ImportError)
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "tvmscript.md").read_text()
    assert f"`{info.value}`" in docs


def test_the_docs_quote_the_bridges_errors():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "tvmscript.md").read_text()
    f = pp.parse("""
@T.prim_func
def f(A: T.Buffer((n, m), "float32"), m: T.int32, n: T.int32):
    for i, j in T.grid(n, m):
        A[i, j] = 1.0
""")
    with pytest.raises(TVMInteropError) as info:
        pptvm.to_tvm(f)
    assert f"`{str(info.value).splitlines()[0]}`" in docs
    with pytest.raises(TVMInteropError) as info:
        pptvm.from_tvm("text")
    assert f"`{info.value}`" in docs


# Every part of a block header, as TVM 0.27 writes it (T.reads/T.writes left out: TVM
# infers them, and so does the check below).
HEADER = """
@T.prim_func(s_tir=True)
def f(A: T.Buffer((16, 8), "float32"), B: T.Buffer((14,), "float32")):
    X = T.sblock_alloc_buffer((14,), "float32")
    for io, ii, k in T.grid(4, 4, 6):
        with T.sblock("B"):
            vi = T.axis.spatial(16, io * 4 + ii)
            vk = T.axis.reduce((2, 8), k + 2)
            T.where(io * 4 + ii < 14)
            T.sblock_attr({"tag": "sum", "sizes": [4, 4]})
            t = T.sblock_alloc_buffer((1,), "float32", scope="local")
            with T.init():
                X[vi] = T.float32(0.0)
            t[0] = A[vi, vk]
            X[vi] = X[vi] + t[0]
    for i in range(14):
        with T.sblock("copy"):
            vi = T.axis.remap("S", [i])
            B[vi] = X[vi]
"""

LOWERED_BLOCKS = """
@T.prim_func
def f(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")):
    for io, ii, k in T.grid(4, 4, 6):
        with T.block("B"):
            vi = io * 4 + ii
            vk = k + 2
            if vk == 2:
                B[vi] = 0.0
            B[vi] = B[vi] + A[vi, vk]
"""

DERIVED = """
@T.prim_func(s_tir=True)
def f(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")):
    for io, ii, k in T.grid(4, 4, 6):
        with T.sblock("B"):
            vi = T.axis.spatial(16, io * 4 + ii)
            vk = T.axis.reduce((2, 8), k + 2)
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi, vk]
"""


def test_every_part_of_a_block_header_reaches_tvm():
    import tvm_ffi
    from tvm.script import from_source

    ours = pptvm.to_tvm(pp.parse(HEADER))
    assert tvm_ffi.structural_equal(ours, from_source(HEADER))
    # TVM's predicate stands outside the block, over the loops: one that names an axis
    # (which polypad reads, and prints back as it was written) TVM refuses.
    text = HEADER.replace("T.where(io * 4 + ii < 14)", "T.where(vi < 14)")
    assert "T.where(vi < 14)" in pp.script(pp.parse(text))
    with pytest.raises(TVMInteropError, match="Invalid use of undefined variable vi"):
        pptvm.to_tvm(pp.parse(text))


def test_a_derived_header_is_the_one_tvm_would_write():
    import tvm_ffi
    from tvm.script import from_source

    ours = pptvm.to_tvm(pp.parse(LOWERED_BLOCKS))
    assert tvm_ffi.structural_equal(ours, from_source(DERIVED))


def test_an_allocation_below_a_blocks_top_is_refused_by_tvm():
    f = pp.parse("""
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            for x in T.serial(2):
                t = T.alloc_buffer((1,), "float32")
                t[0] = A[vi]
                B[vi] = t[0]
""")
    with pytest.raises(TVMInteropError) as info:
        pptvm.to_tvm(f)
    lines = str(info.value).splitlines()
    assert lines[0].startswith("TVM 0.27 refused polypad's script of 'f': error: Program is "
                               "not well-formed.")
    assert lines[1].startswith("Traceback: TIR is ill-formed: buffer t is used at ")
    assert lines[1].endswith("without a prior DeclBuffer or other declaration.")
