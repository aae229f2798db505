"""README.md and docs/ say what the code does.

Every Python block of the README runs here, prints what the README shows, and
does what its comments say; each claim of its prose is checked by a test
below.  The documents stand alone (no pointer outside the repository) and
the API names the documents use exist (tests/test_docs.py).  The import
rules of docs/architecture.md are tests/test_layers.py.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from readme_support import ROOT, blocks, run, section

# ---------------------------------------------------------------- install and tests


def test_readme_commands_match_ci():
    ci = (ROOT / ".ci" / "run").read_text()
    install = blocks("Install and run the demo", "bash")[0]
    tests = blocks("Run the tests", "bash")[0]
    assert install.strip() in ci and tests.strip() in ci
    assert install.strip() == (
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/polypad demo")
    assert tests.strip() == ('.venv/bin/pip install ".[test]" && '
                             '.venv/bin/python -m pytest -q -n 2 --dist loadfile')


def test_demo_does_the_steps_the_readme_lists():
    from polypad import demo

    source = Path(demo.__file__).read_text()
    for step in ("parse(", "script(func)", "extract(func)", "model.schedule", "kernel.source",
                 "a.sum(axis=1)"):
        assert step in source
    assert "rows: int = 4096, cols: int = 4094" in source
    assert "4096 × 4094" in section("Install and run the demo")


# ---------------------------------------------------------------- quickstart


def test_quickstart_runs_and_does_what_its_comments_say():
    ns: dict = {}
    printed = run(blocks("Quickstart", "python")[0], ns, "quickstart")
    pp, np_, f = ns["pp"], ns["np"], ns["f"]
    assert printed.startswith(pp.script(f))
    # The round trip: structurally equal, not ==.
    again = pp.parse(pp.script(f))
    assert pp.structural_equal(again, f) and again != f
    st = ns["st"]
    assert str(st.domain) in printed and str(st.domain).startswith("{ S0[i] : 0 <= i <= 13")
    assert "S0[i] -> A[i]" in str(st.reads) and "S0[i] -> B[i]" in str(st.writes)
    expected = np_.where(np_.arange(14) % 4 < 2, 2.0 * np_.arange(14), 0.0).astype(np_.float32)
    np_.testing.assert_array_equal(ns["b"], expected)  # updated in place
    assert "def kernel(A, B)" in ns["kernel"].source
    b = np_.zeros(14, np_.float32)
    ns["reference"](ns["a"], b)  # the interpreter, called the same way
    np_.testing.assert_array_equal(b, expected)
    m = ns["m"]
    assert m.transformed_shape((14,)) == (4, 4)
    assert pp.script(m.padding_predicate((14,))) == "i0 == 3 and i1 >= 2"
    inverse, padding = ns["inverse"], ns["padding"]
    assert pp.script(padding) == "i0 == 3 and i1 >= 2"
    assert inverse.transformed_shape((4, 4)) == (16,)
    assert ns["packed"].shape == (4, 4) and ns["packed"][3, 3] == 0.0
    assert ns["packed"][2, 1] == 9.0


def test_prim_func_reads_source_and_needs_future_annotations_for_symbolic_shapes(tmp_path):
    body = '''
import polypad as pp
from polypad import T

@pp.prim_func
def scale(n: T.int32, A: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        A[i] = 2.0 * A[i]
'''
    with_future = tmp_path / "with_future.py"
    with_future.write_text("from __future__ import annotations\n" + body)
    module = _load(with_future)
    scale = module.scale
    import polypad as pp

    assert isinstance(scale, pp.ir.PrimFunc)  # parsed, never called
    assert isinstance(scale.params[1].shape[0], pp.ir.Var)
    without = tmp_path / "without_future.py"
    without.write_text(body)
    with pytest.raises(NameError, match="'n' is not defined"):
        _load(without)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[path.stem]
    return module


# ---------------------------------------------------------------- schedules and analyses


def test_schedules_section_prints_what_it_shows():
    ns: dict = {}
    code = blocks("Schedules and analyses", "python")
    printed = run(code[0], ns, "schedules")
    pp = ns["pp"]
    shown = blocks("Schedules and analyses", "text")[0]
    function = shown.split("\n\n", 1)[0]
    assert pp.script(ns["sch"].func) == function + "\n"
    assert printed == shown
    assert [step.primitive for step in ns["sch"].trace] == ["transform_layout",
                                                            "sequential_buffer_access"]
    expected = pp.parse(function)
    pp.assert_structural_equal(ns["sch"].func, expected)
    pp.assert_structural_equal(ns["sch"].trace.apply_to(ns["f"]).func, expected)


def test_loop_schedules_section_prints_what_it_shows():
    ns: dict = {}
    printed = run(blocks("Loop schedules", "python")[0], ns, "loop schedules")
    shown = blocks("Loop schedules", "text")[0]
    assert printed == shown
    pp, sch = ns["pp"], ns["sch"]
    assert [step.primitive for step in sch.trace] == ["split", "compute_at", "vectorize"]
    pp.assert_structural_equal(sch.trace.apply_to(ns["f"]).func, sch.func)
    # The schedule computes what the original does.
    import codegen

    rng = np.random.default_rng(0)
    a = rng.standard_normal(1026).astype(np.float32)
    want, got = np.zeros(1024, np.float32), np.zeros(1024, np.float32)
    codegen.build(ns["f"], target="python")(a, want)
    codegen.build(sch.func, target="python")(a, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # The refusal names the shared element of B.
    assert "element: B[64]" in printed.splitlines()[-1]
    # store_at gives each tile its own B, and then the tiles run in parallel.
    printed = run(blocks("Loop schedules", "python")[1], ns, "store_at")
    assert printed.rstrip() == blocks("Loop schedules", "text")[1].rstrip()
    assert [step.primitive for step in sch.trace][-2:] == ["store_at", "parallel"]
    got[:] = 0
    codegen.build(sch.func)(a, got)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_the_fuzz_command_and_its_last_result_are_stated():
    text = section("How it is checked")
    command = re.search(r"`python (benchmarks/fuzz\.py) --count (\d+) --seed (\d+)`", text)
    assert command is not None
    script = (ROOT / command.group(1)).read_text()
    assert '"--count"' in script and '"--seed"' in script
    assert "10,000 cases" in text and "unsound 0, crashes 0" in text


def test_analyses_block_does_what_its_comments_say():
    ns: dict = {}
    code = blocks("Schedules and analyses", "python")
    run(code[0], ns, "schedules")
    printed = run(code[1], ns, "analyses").splitlines()
    analyses = ns["analyses"]
    assert printed[0] == "A[i] for 1 <= i < 16"
    decision = ns["decision"]
    assert isinstance(decision, analyses.Refuted) and printed[1].startswith("refuted: ")
    assert printed[1].endswith("instances: S0(i=1), S1(j=0); element: A[1]")
    assert str(decision.counterexample.element) == "A[1]"
    assert printed[2].startswith("{ S0[i] -> S1[j = -1 + i]") or "S0[i] -> S1[" in printed[2]
    assert printed[3].startswith("refuted: S0(i=0) writes A[0] and ")


def test_preserve_interface_refuses_and_suggests_a_cache():
    import polypad as pp
    from polypad.errors import IllegalTransformError

    f = pp.parse('''
@T.prim_func
def fill(A: T.Buffer((14,), "int32")):
    with T.block("compute"):
        for i in T.serial(14):
            A[i] = i
''')
    sch = pp.Schedule(f, preserve_interface=True)
    with pytest.raises(IllegalTransformError, match=r"sch\.cache_read.*sch\.cache_write"):
        sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0)
    sch.cache_write("compute", "A")
    sch.transform_layout("compute", "A_cache", lambda i: [i // 4, i % 4], pad_value=0)


def test_dependences_are_isl_relations_and_refusals_carry_counterexamples():
    import islpy as isl

    import analyses
    import polypad as pp

    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[i] = 1.0
    for i in T.serial(4):
        A[i] = A[i] + 1.0
''')
    deps = analyses.dependences(f)
    for relation in (deps.flow, deps.anti, deps.output):
        assert isinstance(relation, (isl.UnionMap, isl.Map))
    refusal = analyses.is_no_op(f, f.body.stmts[1])
    assert isinstance(refusal, analyses.Refuted)
    cex = refusal.counterexample
    assert isinstance(cex, analyses.Counterexample) and cex.instances and cex.element


# ---------------------------------------------------------------- conditional removal


CONDITIONAL = "Can this conditional be removed?"


@pytest.fixture(scope="module")
def conditional_run():
    ns: dict = {}
    code = blocks(CONDITIONAL, "python")
    printed = run(code[0], ns, "conditional")
    return ns, printed, code


def test_conditional_section_prints_what_it_shows(conditional_run):
    ns, printed, _ = conditional_run
    assert printed == blocks(CONDITIONAL, "text")[0]


def test_compute_guard_goes_and_pad_guard_stays(conditional_run):
    ns, _, _ = conditional_run
    analyses, pp, conv1d = ns["analyses"], ns["pp"], ns["conv1d"]
    removable = analyses.can_remove_conditional(conv1d, "compute")
    assert isinstance(removable, analyses.Proved) and removable.keep == "then"
    assert "B_pad_value" in removable.detail
    kept = analyses.can_remove_conditional(conv1d, "B_pad_value")
    assert isinstance(kept, analyses.Refuted)  # the value B[0, 0] holds, traced: README
    cex = kept.counterexample
    assert cex.element == analyses.Element("B", (0, 0))
    assert cex.values["stored 0.0"] == 0.0 and cex.values["B[0, 0]"] != 0.0
    # The counterexample replays: the inputs it names give B[0, 0] the value it names.
    import codegen

    inputs = [np.zeros(p.shape, "float32") for p in conv1d.params]
    for key, value in cex.values.items():
        if key.startswith("input "):
            name, index = key[len("input "):].rstrip("]").split("[")
            which = [p.name for p in conv1d.params].index(name)
            inputs[which][tuple(int(k) for k in index.split(","))] = value
    codegen.build(conv1d, target="python")(*inputs)
    assert inputs[2][0, 0] == np.float32(cex.values["B[0, 0]"])
    report = ns["report"]
    assert [e.removed for e in report.entries] == [True, False]
    assert all(e.decision is not None for e in report.entries) and str(report)
    # The removal keeps the function's meaning.
    import codegen

    rng = np.random.default_rng(0)
    after = pp.transform.remove_branching_through_overcompute(conv1d)
    args = [rng.standard_normal(p.shape).astype("float32") for p in conv1d.params]
    before_out, after_out = [a.copy() for a in args], [a.copy() for a in args]
    codegen.build(conv1d, target="python")(*before_out)
    codegen.build(after, target="python")(*after_out)
    np.testing.assert_array_equal(before_out[2], after_out[2])


def test_the_rfc_shape_of_a_is_refused_with_the_element(conditional_run):
    ns, _, code = conditional_run
    printed = run(code[1], dict(ns), "conditional-rfc")
    comment = " ".join(line.lstrip("# ").strip() for line in code[1].splitlines()
                       if line.startswith("#"))
    assert printed.strip() == comment
    assert printed.strip().endswith("instances: compute(io=3, ii=2, f=2); element: A[4, 0]")


def test_remove_branching_command_exists(tmp_path):
    from polypad import cli

    kernel = tmp_path / "conv1d.py"
    ns: dict = {}
    run(blocks(CONDITIONAL, "python")[0].split("conv1d = pp.parse")[0], ns, "text")
    kernel.write_text(ns["CONV1D"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["remove-branching", str(kernel)])
    assert code == cli.EXIT_OK
    assert "removed" in out.getvalue() and "kept" in out.getvalue()


# ---------------------------------------------------------------- command line


def test_command_line_lists_the_real_commands_and_exit_codes():
    from polypad import cli

    usage = blocks("Command line", "bash")[0]
    commands = re.findall(r"^polypad ([a-z][a-z-]*)", usage, re.M)
    assert commands == ["check", "build", "remove-branching", "demo"]
    help_text = cli.build_parser().format_help()
    for command in commands:
        assert command in help_text
    codes = [int(c) for c in re.findall(r"^\| (\d+) \|", section("Command line"), re.M)]
    assert codes == list(cli.EXIT_CODES)
    assert cli.MAX_INPUT_BYTES == 10 * 1024 * 1024 and "10 MiB" in section("Command line")
    for command in ("check", "build", "remove-branching"):
        args = cli.build_parser().parse_args([command, "k.py", "--func", "f", "--traceback"])
        assert args.func == "f"


# ---------------------------------------------------------------- kernel cache


def test_kernel_cache_is_where_the_readme_says(tmp_path, monkeypatch):
    import codegen
    import polypad as pp

    monkeypatch.delenv("POLYPAD_CACHE_DIR", raising=False)
    assert codegen.cache_dir() == Path.home() / ".cache" / "polypad" / "kernels"
    monkeypatch.setenv("POLYPAD_CACHE_DIR", str(tmp_path))
    assert codegen.cache_dir() == tmp_path
    f = pp.parse('''
@T.prim_func
def readme_cache_probe(A: T.Buffer((3,), "int32")):
    for i in T.serial(3):
        A[i] = i * 7 + 4
''')
    kernel = codegen.build(f)
    a = np.zeros(3, np.int32)
    kernel(a)
    assert list(a) == [4, 11, 18]
    files = list(tmp_path.glob("polypad_kernel_*.py"))
    assert len(files) == 1 and files[0].read_text() == kernel.source
    assert "njit(cache=True" in kernel.source
    codegen.clear_cache()
    assert not list(tmp_path.glob("polypad_kernel_*"))


# ---------------------------------------------------------------- errors


def test_errors_section_runs_and_prints_its_comment():
    printed = run(blocks("Errors", "python")[0], {}, "errors")
    assert printed == "simplify: parameter func takes a PrimFunc, not NoneType\n"
    import polypad as pp
    from polypad import errors

    for name in ("ArgumentTypeError", "ArgumentValueError", "NotFoundError"):
        assert issubclass(getattr(errors, name), errors.PolypadError)
    assert issubclass(errors.ArgumentTypeError, TypeError)
    assert issubclass(errors.ArgumentValueError, ValueError)
    f = pp.parse('''
@T.prim_func
def g(A: T.Buffer((4,), "float32")):
    with T.block("only"):
        A[0] = 1.0
''')
    with pytest.raises(errors.NotFoundError, match="blocks: 'only'"):
        pp.Schedule(f).cache_read("other", "A")
