"""The wider TVM 0.27 corpus (``tests/tvm_corpus_wide.py``): parsed, run, read back.

Every function TVM makes there (more TOPI operators, schedule primitives,
thread bindings, CPU and GPU lowering) is parsed as TVM printed it, run by
the reference executor against TVM's own llvm build, and printed back as text
that TVM reads into a function ``tvm_ffi.structural_equal`` to its own parse
of the original.  polypad reads every function of the corpus.
``python benchmarks/bench_tvm_wide.py`` prints the same as a table.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import polypad as pp
from polypad.errors import BuildError
from polypad.ir.nodes import IRModule
from polypad.ir.structural import assert_structural_equal
from polypad.ir.verify import verify

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

tvm = pytest.importorskip("tvm")

from bench_tvm_wide import _compare, _tvm_run, inputs  # noqa: E402
from tvm_corpus_wide import (  # noqa: E402
    GPU,
    NOT_BUILT,
    NOT_EQUAL,
    TVM_UNREADABLE,
    wide_corpus,
)

import codegen  # noqa: E402


def _text(name: str) -> str:
    return next(text for n, _, text in wide_corpus() if n == name)


NAMES = [name for name, _, _ in wide_corpus()]
READ = list(NAMES)


def test_the_wide_corpus_covers_each_family_and_the_new_constructs():
    families = {family for _, family, _ in wide_corpus()}
    assert families == {"te", "schedule", "lowered"}
    assert len(NAMES) >= 80
    texts = "\n".join(text for _, _, text in wide_corpus())
    for spelling in ('T.thread_binding(', 'thread="threadIdx.x"', "T.launch_thread(",
                     "T.Select(", "T.truncmod(", "T.Div(", "T.sblock_alloc_buffer(",
                     '"local"', "T.comm_reducer(", "T.unroll(", "T.if_then_else(",
                     'annotations={"pragma_auto_unroll_max_step": 16}', "T.erf(",
                     "T.nearbyint(", "T.fabs(", "T.where(", '"uint8"', '"int8"'):
        assert spelling in texts, spelling


@pytest.mark.parametrize("name", READ)
def test_polypad_reads_runs_and_prints_back_what_tvm_reads(name):
    import tvm_ffi
    from tvm.script import from_source

    text = _text(name)
    made = pp.parse(text, filename=name)
    f = made.funcs[0] if isinstance(made, IRModule) else made
    verify(f)
    # The reference executor against TVM's own build, on the same random inputs; an
    # opaque intrinsic is refused by name and line.
    if name in NOT_BUILT:
        with pytest.raises(BuildError, match=re.escape(f"cannot build 'main': {NOT_BUILT[name]} "
                                                      "at line")):
            codegen.build(f, target="python")
    else:
        args = inputs(f, name)
        want = _tvm_run(name, args)
        codegen.build(f, target="python")(*args)
        assert _compare(args, want) is None, name
    # Round trips: polypad's exact; TVM's structurally equal to its parse of TVM's text.
    printed = pp.script(made)
    assert_structural_equal(pp.parse(printed), made)
    if name in TVM_UNREADABLE:  # TVM fails on its own text, and on polypad's alike
        for source in (text, printed):
            with pytest.raises(Exception, match="and / or"):
                from_source(source)
        return
    theirs, back = from_source(text), from_source(printed)
    if name in NOT_EQUAL:  # a limit of polypad's IR, measured
        where = tvm_ffi.get_first_structural_mismatch(theirs, back)
        assert where is not None and str(where[0]).endswith(NOT_EQUAL[name]), where
    else:
        assert tvm_ffi.structural_equal(theirs, back), \
            tvm_ffi.get_first_structural_mismatch(theirs, back)


def test_the_gpu_functions_are_thread_bound():
    for name in GPU:
        assert "threadIdx.x" in _text(name), name
