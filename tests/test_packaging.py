"""Packaging: one version string, typing markers shipped, license and changelog."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import polypad

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGES = ("polypad", "analyses", "codegen")


def test_version_has_one_source_of_truth():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    attr = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    module_name, _, name = attr.rpartition(".")
    assert module_name == "polypad._version" and name == "__version__"
    # setuptools reads the literal without importing polypad (whose imports
    # need islpy and z3 at build time), so the module must stay one assignment.
    tree = ast.parse((ROOT / "polypad" / "_version.py").read_text())
    assigns = [n for n in tree.body if isinstance(n, ast.Assign)]
    assert not [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert len(assigns) == 1 and assigns[0].targets[0].id == "__version__"
    assert assigns[0].value.value == polypad.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc)?\d*(\.dev\d+)?", polypad.__version__)


def test_python_dash_m_polypad_reports_the_version():
    proc = subprocess.run([sys.executable, "-m", "polypad", "--version"],
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, f"polypad {polypad.__version__}\n", "")


@pytest.mark.parametrize("package", PACKAGES)
def test_typing_marker_is_shipped(package):
    assert (ROOT / package / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"][package]


def test_license_is_the_full_apache_2_text():
    text = (ROOT / "LICENSE").read_text()
    assert text.lstrip().startswith("Apache License\n")
    assert "Version 2.0, January 2004" in text
    for section in ("1. Definitions.", "2. Grant of Copyright License.",
                    "3. Grant of Patent License.", "4. Redistribution.",
                    "5. Submission of Contributions.", "6. Trademarks.",
                    "7. Disclaimer of Warranty.", "8. Limitation of Liability.",
                    "9. Accepting Warranty or Additional Liability."):
        assert section in text
    assert "END OF TERMS AND CONDITIONS" in text
    license_ = PYPROJECT["project"]["license"]
    assert (license_["text"] if isinstance(license_, dict) else license_) == "Apache-2.0"


def test_changelog_has_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "keepachangelog.com" in text
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0]
    for topic in ("int32 wrapping", "time budgets", "Command line hardening", "py.typed"):
        assert topic in unreleased


def test_the_tvm_extra_pins_what_polypad_tvm_is_proved_against():
    pins = ["apache-tvm==0.27.0.post1", "apache-tvm-ffi==0.1.14.post1"]
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert extras["tvm"] == pins
    # The test extra installs TVM, so the interop tests run (and may not skip) in CI.
    assert set(pins) <= set(extras["test"]) and set(pins) <= set(extras["dev"])


def test_importing_polypad_does_not_import_tvm():
    code = "import sys, polypad, polypad.tvm; print('tvm' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert (proc.returncode, proc.stdout) == (0, "False\n"), proc.stderr


def test_the_cuda_extra_pins_what_tests_cuda_run_and_the_test_extra_includes_it():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert extras["cuda"] == ["numba-cuda==0.30.4", "numpy<2.5"]
    assert set(extras["cuda"]) <= set(extras["test"]) and set(extras["cuda"]) <= set(extras["dev"])
