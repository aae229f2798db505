"""docs/ and the README's reference sections: the layout table names real folders,
the documents stand alone, the API names they use exist, their examples hold."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from readme_support import DOCS, README, ROOT, blocks, run, section

# ---------------------------------------------------------------- layout and docs


def test_layout_table_names_real_folders():
    folders = re.findall(r"^\| `([\w/]+)` \|", section("Layout"), re.M)
    assert folders
    for folder in folders:
        assert (ROOT / folder).is_dir(), folder
    for script in re.findall(r"`(?:python benchmarks/)?(bench_\w+\.py)`", section("Layout")):
        assert (ROOT / "benchmarks" / script).is_file(), script


def test_docs_exist_and_stand_alone():
    linked = re.findall(r"\]\((docs/[\w.]+)\)", section("Documentation"))
    assert linked == ["docs/architecture.md", "docs/semantics.md", "docs/tvmscript.md",
                      "docs/schedules.md", "docs/autoschedule.md", "docs/cuda.md"]
    documents = [README, *sorted(DOCS.glob("*.md"))]
    for path in documents:
        text = path.read_text()
        assert "DESIGN.md" not in text, path
        assert "../shared" not in text and "shared folder" not in text, path
        for target in re.findall(r"\]\(([\w./#-]+)\)", text):
            if target.startswith("http"):
                continue
            assert (path.parent / target.split("#")[0]).exists(), (path, target)


def _documented(pattern: str) -> set[str]:
    names: set[str] = set()
    for path in [README, *DOCS.glob("*.md")]:
        names |= set(re.findall(pattern, path.read_text()))
    return names


def test_docs_name_real_api():
    import analyses
    import codegen
    import polypad as pp

    for name in _documented(r"\bsch\.(\w+)\("):
        assert hasattr(pp.Schedule, name), f"Schedule.{name}"
    for name in _documented(r"pp\.transform\.(\w+)"):
        assert hasattr(pp.transform, name), f"pp.transform.{name}"
    for name in _documented(r"\banalyses\.(\w+)\("):
        assert hasattr(analyses, name), f"analyses.{name}"
    for name in _documented(r"\bcodegen\.(\w+)"):
        assert hasattr(codegen, name), f"codegen.{name}"
    for name in _documented(r"\bpp\.(\w+)\("):
        assert hasattr(pp, name), f"pp.{name}"


def test_semantics_examples_hold():
    import analyses
    import codegen
    import polypad as pp
    from polypad import T
    from polypad.errors import ParseError, VerifyError

    x = pp.ir.Var("x", "float32")
    i = pp.ir.Var("i", "int32")
    assert isinstance(analyses.prove((x * 0.0).equal(0.0)), analyses.Proved)
    assert isinstance(analyses.prove((x + 1.0 - x).equal(1.0)), analyses.Proved)
    refuted = analyses.prove((x * 0.0).equal(0.0), strict_ieee=True)
    assert str(refuted).startswith("refuted: x * 0.0 == 0.0 does not hold; values: x=")
    assert str(refuted.counterexample.values["x"]) in ("inf", "-inf", "nan")
    assert isinstance(analyses.prove((x + 1.0 - x).equal(1.0), strict_ieee=True),
                      analyses.Refuted)
    undef = T.undef
    assert isinstance(analyses.prove((undef("float32") - undef("float32")).equal(0.0)),
                      analyses.Refuted)
    assert isinstance(analyses.prove((undef("float32") + 1.0).equal(undef("float32") + 1.0)),
                      analyses.Refuted)
    assert isinstance(analyses.prove((0.0 * undef("float32")).equal(0.0), strict_ieee=True),
                      analyses.Proved)
    wrap = analyses.prove(i + 1 > i)
    assert isinstance(wrap, analyses.Refuted) and wrap.counterexample.params == {"i": 2**31 - 1}
    product = analyses.prove(i // -4 * -4 >= i)  # only where the product wraps
    assert isinstance(product, analyses.Refuted)
    assert product.counterexample.params["i"] in (2147483645, 2147483646, 2147483647)
    with pytest.raises(ParseError, match="outside the range of int32"):
        pp.parse('''
@T.prim_func
def f(A: T.Buffer((1,), "int32")):
    A[0] = 3000000000
''')
    with pytest.raises(VerifyError, match="may not appear in an index"):
        pp.verify(pp.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    A[T.undef("int32")] = 1.0
'''))
    # Floor division and the zero divisor, in both targets.
    f = pp.parse('''
@T.prim_func
def f(A: T.Buffer((6,), "int32"), n: T.int32, d: T.int32):
    A[0] = n // d
    A[1] = n % d
    A[2] = (0 - n) // d
    A[3] = (0 - n) % d
    A[4] = n // (d - d)
    A[5] = n % (d - d)
''')
    for target in ("python", "numba"):
        out = np.zeros(6, np.int32)
        codegen.build(f, target=target)(out, 7, -4)
        assert list(out) == [7 // -4, 7 % -4, -7 // -4, -7 % -4, 0, 0], target
        codegen.build(f, target=target)(out, 7, 4)
        assert list(out[:4]) == [1, 3, -2, 1], target


# ---------------------------------------------------------------- TVM interop


def test_tvm_interop_section_runs_and_prints_what_it_shows():
    if not os.environ.get("CI"):  # CI installs TVM with the test extra: no skip there
        pytest.importorskip("tvm")
    ns: dict = {}
    printed = run(blocks("TVM interop", "python")[0], ns, "tvm interop")
    assert printed == blocks("TVM interop", "text")[0]
    assert printed.endswith("\nTrue\n")
    pp = ns["pp"]
    assert pp.script(ns["sch"].func) + "\nTrue\n" == printed
    install = blocks("TVM interop", "bash")[0]
    assert '.venv/bin/pip install ".[tvm]"' in install
    assert "MissingDependencyError" in section("TVM interop")
    from polypad.errors import MissingDependencyError

    assert "polypad[tvm]" in str(MissingDependencyError.__doc__)
