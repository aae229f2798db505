"""Targets are registered objects: ``codegen.targets()``, each target's own options,
and a new target that is one class and one ``register`` call."""

from __future__ import annotations

import importlib.util
import sys
from functools import partial
from pathlib import Path

import codegen_kernels as K
import numpy as np
import pytest

import codegen
import codegen.target
from codegen.numba import NumbaTarget
from codegen.python import PythonTarget
from polypad.errors import (
    ArgumentError,
    ArgumentTypeError,
    ArgumentValueError,
    AssumptionError,
    BuildArgumentError,
    BuildError,
    OutOfBoundsError,
)
from polypad.script import parse, script
from polypad.semantics import interpreter

ROOT = Path(__file__).resolve().parents[2]

BUMP = parse('''
@T.prim_func
def bump(A: T.Buffer((8,), "float32"), n: T.int32):
    for i in T.serial(n):
        A[i] = A[i] + 1.0
''')
CHECKED = parse('''
@T.prim_func
def checked(A: T.Buffer((8,), "float32"), n: T.int32):
    T.assume(n < 6)
    for i in T.serial(n):
        A[i] = A[i] + 1.0
''')


class ScriptTarget(codegen.Target):
    """The minimal target of docs/architecture.md ("Targets"): its source is the
    lowered function's script, and it runs that function with the reference
    executor."""

    name = "script"
    options = ("header",)

    def __init__(self, *, header: str = "# lowered"):
        if not isinstance(header, str):
            raise BuildArgumentError("codegen.build: header takes a str")
        self.header = header

    def executable(self, func, precondition):
        return codegen.Executable(load=lambda: partial(interpreter.run, func),
                                  source=f"{self.header}\n{script(func)}")


@pytest.fixture
def registry(monkeypatch):
    """A registry of this test's own, so that what it registers goes with it."""
    monkeypatch.setattr(codegen.target, "_registry", dict(codegen.target._registry))


def test_the_registered_targets():
    assert codegen.targets() == ("numba", "python", "cuda")
    assert codegen.build(K.elementwise()).target == "numba"
    assert codegen.build(K.elementwise(), target="python").target == "python"


def test_an_unknown_target_lists_the_known_ones():
    with pytest.raises(BuildError, match=r"unknown target 'opencl'; choose one of numba, "
                                         r"python, cuda"):
        codegen.build(K.elementwise(), target="opencl")


def test_an_option_a_target_does_not_take_names_the_target_and_its_options():
    with pytest.raises(BuildArgumentError) as info:
        codegen.build(K.elementwise(), target="python", vector_width=256)
    assert str(info.value) == (
        "codegen.build: the 'python' target does not take the option vector_width; "
        "it takes the options fastmath, boundscheck")
    assert isinstance(info.value, ArgumentTypeError)
    with pytest.raises(BuildArgumentError, match=(
            r"the 'numba' target does not take the options fast_math, width; it takes the "
            r"options fastmath, vector_width, boundscheck")):
        codegen.build(K.elementwise(), fast_math=None, width=256)


def test_the_reference_executor_takes_only_what_it_does_anyway():
    f = K.elementwise()
    a, want = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
    for options in ({}, {"fastmath": None}, {"fastmath": False}, {"boundscheck": True},
                    {"boundscheck": False}):
        got = np.zeros(16, np.float32)
        codegen.build(f, target="python", **options)(a, got)
        np.testing.assert_array_equal(got, a * 2 + 1)
    for mode in ("contract", "full", True):
        with pytest.raises(ArgumentValueError, match="computes in strict IEEE"):
            codegen.build(f, target="python", fastmath=mode)
    assert not want.any()


def test_options_are_fields_of_the_target():
    target = NumbaTarget(fastmath=True, vector_width=256, boundscheck=True)
    assert (target.fastmath, target.vector_width, target.boundscheck) == ("full", 256, True)
    assert NumbaTarget().fastmath == "contract"
    assert NumbaTarget.options == ("fastmath", "vector_width", "boundscheck")
    assert PythonTarget.checks_assumptions and not NumbaTarget.checks_assumptions
    with pytest.raises(ArgumentValueError, match="fastmath must be one of"):
        NumbaTarget(fastmath="fast")


def test_a_new_target_is_one_class_and_one_registration(registry):
    assert codegen.register(ScriptTarget) is ScriptTarget
    assert codegen.targets() == ("numba", "python", "cuda", "script")
    kernel = codegen.build(BUMP, target="script", header="# mine")
    assert kernel.target == "script"
    assert kernel.source.startswith("# mine\n@T.prim_func")
    # The shared machinery comes with it: argument checks, and the precondition
    # (n < 9 keeps A[i] inside), tested by the call wrapper before anything runs.
    a = np.zeros(8, np.float32)
    kernel(a, 4)
    np.testing.assert_array_equal(a, [1, 1, 1, 1, 0, 0, 0, 0])
    with pytest.raises(OutOfBoundsError, match="stays inside its buffers only where n < 9"):
        kernel(a, 9)
    with pytest.raises(ArgumentError, match="argument 'A' must have dtype float32"):
        kernel(a.astype(np.float64), 4)
    np.testing.assert_array_equal(a, [1, 1, 1, 1, 0, 0, 0, 0])
    # Assumptions are checked only when asked: this target runs what lowering left.
    codegen.build(CHECKED, target="script")(a, 7)
    with pytest.raises(AssumptionError, match=r"T.assume\(n < 6\) is false"):
        codegen.build(CHECKED, target="script", check_assumptions=True)(a, 7)
    with pytest.raises(BuildArgumentError, match="the 'script' target does not take the "
                                                 "option fastmath; it takes the options header"):
        codegen.build(CHECKED, target="script", fastmath=None)


def test_registering_checks_what_it_is_given(registry):
    with pytest.raises(ArgumentTypeError, match="takes a Target subclass, not str"):
        codegen.register("script")

    class Impostor(ScriptTarget):
        name = "numba"

    with pytest.raises(ArgumentValueError, match="the name 'numba' is taken by "
                                                 "codegen.numba.target.NumbaTarget"):
        codegen.register(Impostor)
    assert codegen.targets() == ("numba", "python", "cuda")


def _import_graph(monkeypatch):
    """scripts/import_graph.py, which is no package's module."""
    spec = importlib.util.spec_from_file_location("import_graph",
                                                  ROOT / "scripts" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclass looks itself up
    spec.loader.exec_module(module)
    return module


def test_what_targets_share_imports_no_target_and_the_semantics_no_analyses(monkeypatch):
    graph = _import_graph(monkeypatch)
    edges = graph.edges()  # every import, those inside functions too
    targets = ("codegen.numba", "codegen.python", "codegen.cuda")
    shared = [m for m in graph.modules() if m.startswith("codegen.")
              and not m.startswith(targets) and m != "codegen"]
    assert {"codegen.kernel", "codegen.calling", "codegen.precondition",
            "codegen.loop_ranges", "codegen.timing", "codegen.target"} <= set(shared)
    wrong = [str(e) for e in edges if e.source in shared and e.target.startswith(targets)]
    for source in targets:  # no target imports another
        wrong += [str(e) for e in edges if e.source.startswith(source)
                  and e.target.startswith(targets) and not e.target.startswith(source)]
    wrong += [str(e) for e in edges if e.source.startswith("polypad.semantics")
              and e.target.startswith(("analyses", "codegen", "polypad.transform",
                                       "polypad.schedule", "polypad.viz"))]
    assert not wrong, "\n".join(wrong)
    # Nothing below codegen imports it (the tuner, a layer above, builds and times
    # kernels), and no circle of imports goes through it or through the semantics.
    assert not [str(e) for e in edges if e.target.startswith("codegen")
                and not e.source.startswith(("codegen", "polypad.tuner"))
                and e.source not in ("polypad.cli", "polypad.demo")]
    assert graph.involving(graph.cycles(edges), ["codegen", "polypad.semantics"]) == []
    # Nor where `from PACKAGE import name` counts as an import of the package too.
    strict = graph.edges(named_packages=True)
    assert graph.involving(graph.cycles(strict), ["codegen", "polypad.semantics"]) == []
