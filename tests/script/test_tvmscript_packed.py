"""Packed functions and opaque intrinsics: read and printed, refused by name to build,
``Unknown`` (naming the construct and its line) to every decider but the value analyses,
which answer about the computation inside (tests/analyses/test_canonical.py)."""

from __future__ import annotations

import textwrap

import pytest
from tvmscript_support import roundtrip

import analyses
import codegen
from polypad.errors import BuildError, UnmodelledError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.model import extract
from polypad.script import parse, script

# Cut from what TVM 0.27 prints after MakePackedAPI (tests/tvm_corpus.py).
PACKED = '''
@T.prim_func(s_tir=True)
def scale(self_handle: T.handle, args: T.handle, num_args: T.int32, result: T.handle) -> T.int32:
    T.func_attr({"calling_conv": 1, "target": T.target({"keys": ["cpu"], "kind": "llvm"})})
    assert num_args == 2, ("TypeError", ["Expected ", "2", " arguments", metadata["ir.StringImm"][0]])
    A_type_index: T.let[T.int32] = T.tvm_struct_get(args, 0, 13, "int32")
    A_handle: T.let[T.handle] = T.if_then_else(A_type_index == 70, T.handle_add_byte_offset(T.tvm_struct_get(args, 0, 15, T.handle().ty), 24), T.tvm_struct_get(args, 0, 15, T.handle().ty))
    A_shape: T.let[T.handle("int64", "global")] = T.tvm_struct_get(A_handle, 0, 2, T.handle("int64", "global").ty)
    dev_id: T.let[T.int32] = T.tvm_struct_get(A_handle, 0, 9, "int32")
    A = T.Buffer((64,))
    with T.attr(A, "storage_alignment", 64):
        T.attr("default", "device_id", dev_id)
        assert not T.isnullptr(A_handle), ("TypeError", ["Mismatched type"])
        A = T.decl_buffer((64,), data=T.reinterpret(T.handle("float32", "global").ty, T.tvm_struct_get(A_handle, 0, 1, T.handle().ty)))
        with T.attr({"compute_scope": "scale_compute_"}):
            A_1 = A.view(64)
            for i in range(64):
                A_1[i] = A_1[i] * T.float32(2.0)
        return 0
'''  # noqa: E501


def test_a_packed_function_reads_and_prints_back():
    f = roundtrip(PACKED)
    assert f.ret_dtype == "int32"
    assert [(p.name, p.dtype) for p in f.params] == [
        ("self_handle", "handle"), ("args", "handle"), ("num_args", "int32"),
        ("result", "handle")]
    first = next(x for x in walk(f.body) if isinstance(x, n.Assert))
    assert first.message == ("('TypeError', ['Expected ', '2', ' arguments', "
                             "metadata['ir.StringImm'][0]])")
    attrs = [x for x in walk(f.body) if isinstance(x, n.AttrStmt)]
    assert [(type(a.node).__name__, a.key) for a in attrs] == [
        ("Buffer", "storage_alignment"), ("StringImm", "device_id"), ("IntImm", "compute_scope")]
    text = script(f)
    assert "def scale(" in text and ") -> T.int32:" in text
    assert 'with T.attr({"compute_scope": "scale_compute_"}):' in text
    assert 'T.tvm_struct_get(args, 0, 13, "int32")' in text  # its dtype is its last argument
    assert "T.handle(\"int64\", \"global\").ty" in text
    # The buffer declared again under its name keeps it: nothing after names the first.
    assert "        A = T.decl_buffer((64,), \"float32\", data=T.reinterpret(" in text


def test_building_is_refused_naming_the_construct_and_its_line():
    f = parse(textwrap.dedent(PACKED))
    with pytest.raises(BuildError) as info:
        codegen.build(f, target="python")
    # `assert num_args == 2` (plain values) runs (tests/codegen/test_run_asserts.py);
    # the first construct after it that no target runs is named.
    assert str(info.value) == ("cannot build 'scale': T.tvm_struct_get at line 6 is an "
                               "opaque TVM intrinsic: its effect on memory is unknown to "
                               "polypad")


def test_deciders_answer_unknown_naming_the_construct_and_its_line():
    f = parse(textwrap.dedent(PACKED))
    # The model holds `assert num_args == 2` (plain values): a check that may raise and
    # a fact for what follows; the first construct after it that it cannot hold is named.
    reason = ("'scale' cannot be modelled: T.tvm_struct_get at line 6 is an opaque TVM "
              "intrinsic: its effect on memory is unknown to polypad")
    answer = analyses.check_bounds(f)
    assert isinstance(answer, analyses.Unknown) and answer.reason == reason
    with pytest.raises(UnmodelledError) as info:
        analyses.dependences(f)
    assert str(info.value) == reason
    with pytest.raises(UnmodelledError):
        extract(f)
    # The value analyses read the computation inside (analyses/canonical_packed.py); a
    # tensor over an argument's pointer is the caller's memory, distinct from the other
    # tensors, only where the function says so.
    answer = analyses.is_no_op(f, f.body)
    assert isinstance(answer, analyses.Unknown)
    assert answer.reason == ("'scale' cannot be modelled: buffer 'A' at line 14 is declared "
                             "over an argument's pointer, and the function does not say its "
                             'arguments are distinct memory ("tirx.noalias")')


def test_the_value_analyses_answer_about_a_packed_functions_computation():
    text = PACKED.replace('"llvm"})})', '"llvm"}), "tirx.noalias": True})')
    f = parse(textwrap.dedent(text))
    (store,) = [x for x in walk(f.body) if isinstance(x, n.BufferStore)]
    answer = analyses.is_no_op(f, store)
    assert isinstance(answer, analyses.Refuted), answer
    cex = answer.counterexample
    assert cex.element == analyses.Element("A", (0,))
    assert "when scale returns (the caller reads it)" in cex.description
    assert cex.values["stored A_1[i] * 2.0"] == 2 * cex.values["A[0]"] != 0.0


TENSOR_CORE = '''
@T.prim_func
def opaque_access(a: T.handle, b: T.handle) -> None:
    A = T.match_buffer(a, [16, 16], "float32")
    B = T.match_buffer(b, [16, 16], "float32")
    for i, j in T.grid(16, 16):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads([])
            T.writes([A[0:16, 0:16]])
            A[vi, vj] = 1
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads([])
            T.writes([B[0:16, 0:16]])
            T.evaluate(T.tvm_fill_fragment(B.data, 16, 16, 16, 0, vi * 16 + vj, dtype="handle"))
'''


def test_a_tensor_core_intrinsic_is_an_opaque_call():
    f = roundtrip(TENSOR_CORE)
    (call,) = [x for x in walk(f.body) if isinstance(x, n.Call)]
    assert call.op == "tvm_fill_fragment" and call.dtype == "handle"
    assert isinstance(call.args[0], n.BufferData) and call.args[0].buffer is f.params[1]
    assert "T.tvm_fill_fragment(B.data, 16, 16, 16, 0, vi * 16 + vj)" in script(f)
    with pytest.raises(BuildError) as info:
        codegen.build(f)
    assert "T.tvm_fill_fragment at line 17 is an opaque TVM intrinsic" in str(info.value)
    bounds = analyses.check_bounds(f)
    assert isinstance(bounds, analyses.Unknown) and "T.tvm_fill_fragment at line 17" in (
        bounds.reason)


@pytest.mark.parametrize("call, dtype, printed", [
    ('T.call_extern("dummy", dtype="handle")', "handle", 'T.call_extern("dummy", dtype="handle")'),
    ('T.call_extern("float32", "expf", A[0])', "float32", 'T.call_extern("float32", "expf", A[0])'),
    ('T.reinterpret("int32", A[0])', "int32", 'T.reinterpret("int32", A[0])'),
    ("T.isnullptr(A.data)", "bool", "T.isnullptr(A.data)"),
    ('T.address_of(A[1])', "handle", "T.address_of(A[1])"),
])
def test_the_dtype_of_an_opaque_call(call, dtype, printed):
    f = roundtrip(f'''
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.evaluate({call})
    ''')
    (node,) = [x for x in walk(f.body) if isinstance(x, n.Call)]
    assert node.dtype == dtype
    assert f"    {printed}\n" in script(f)  # a call statement, as T.evaluate(call) is
