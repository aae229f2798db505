"""TOPI's ``fast_exp`` builds: its ``T.reinterpret`` of an int32 as a float32 is a value
bit cast (numpy's ``view``), which the executors run; TOPI's ``sort``, a call of TVM's
runtime (``T.call_packed("tvm.contrib.sort.sort", ...)``), is refused naming it.

TVM's llvm build of ``fast_exp`` is the reference: the reference executor and
Numba without fast-math give the same bits; Numba's default fast-math may round
the polynomial otherwise (within a few ulps).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import polypad as pp
from polypad.errors import BuildError
from polypad.ir import nodes as n
from polypad.ir.opaque import is_value_bitcast
from polypad.ir.visitor import walk

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

pytest.importorskip("tvm")

from bench_tvm_wide import _tvm_run  # noqa: E402
from tvm_corpus_wide import wide_corpus  # noqa: E402

import codegen  # noqa: E402


def _text(name: str) -> str:
    return next(text for n_, _, text in wide_corpus() if n_ == name)


@pytest.fixture(scope="module")
def fast_exp():
    return pp.parse(_text("fast_exp"))


def test_fast_exp_reads_its_bit_cast_as_a_call_the_executors_run(fast_exp):
    (cast,) = {x for x in walk(fast_exp.body) if isinstance(x, n.Call)
               and x.op == "reinterpret"}
    assert cast.args[0] == n.StringImm("float32") and cast.dtype == "float32"
    assert isinstance(cast.args[1], n.Call) and cast.args[1].op == "shift_left"
    assert cast.args[1].dtype == "int32" and is_value_bitcast(cast)


@pytest.mark.parametrize("low, high", [(-1.0, 1.0), (-90.0, 90.0)])
def test_fast_exp_gives_tvms_bits(fast_exp, low, high):
    a = np.random.default_rng(3).uniform(low, high, (6, 8)).astype("float32")
    want = _tvm_run("fast_exp", [a, np.zeros((6, 8), "float32")])[1]
    for target, options in (("python", {}), ("numba", {"fastmath": False})):
        out = np.zeros((6, 8), "float32")
        codegen.build(fast_exp, target=target, **options)(a.copy(), out)
        np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32), target)
    out = np.zeros((6, 8), "float32")
    codegen.build(fast_exp, target="numba")(a.copy(), out)
    np.testing.assert_allclose(out, want, rtol=1e-5)


BITS = '''
@T.prim_func
def bits(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = T.reinterpret("float32", A[i] + 1)
'''


def test_a_bit_cast_is_numpys_view_on_every_cpu_target():
    f = pp.parse(BITS)
    a = np.random.default_rng(0).integers(0, 2 ** 30, 8).astype("int32")
    for target in ("python", "numba"):
        out = np.zeros(8, "float32")
        codegen.build(f, target=target)(a, out)
        np.testing.assert_array_equal(out.view(np.int32), a + 1, target)


def test_a_bit_cast_between_widths_is_refused_saying_the_widths_differ():
    """Every target and the model refuse it by its widths, not as an unknown intrinsic."""
    import analyses
    from polypad.errors import UnmodelledError

    f = pp.parse(BITS.replace('"int32"', '"int64"'))
    why = (r'T\.reinterpret\("float32", <int64>\) at line 5 reads the bits of a 64-bit '
           r"int64 as a 32-bit float32: the widths differ")
    for target in ("python", "numba"):
        with pytest.raises(BuildError, match=f"^cannot build 'bits': {why}"):
            codegen.build(f, target=target)
    with pytest.raises(UnmodelledError, match=why):
        analyses.dependences(f)


def test_sort_is_refused_naming_the_runtime_function_it_calls():
    f = pp.parse(_text("sort"))
    with pytest.raises(BuildError, match=r"^cannot build 'main': T\.call_packed\("
                                         r'"tvm\.contrib\.sort\.sort", \.\.\.\) at line 10 '
                                         r"calls a function of TVM's runtime"):
        codegen.build(f, target="numba")
