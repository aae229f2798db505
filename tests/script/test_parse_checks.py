"""The checks a parse runs through the model (polypad/script/checks.py).

The script layer does not import the model; the model hands the parser its
checks when it is imported, and ``polypad/__init__.py`` imports the model.
So a bare ``import polypad.script`` in a fresh process still refuses, at the
same place and with the same message, a block axis that leaves its domain,
a ``T.reads`` that misses what the body reads and a ``T.match_buffer``
region of the wrong extent -- without importing the deciders.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import polypad as pp
from polypad.model.affine import equal_everywhere
from polypad.model.block_axes import check_axes
from polypad.model.block_regions import check_declared
from polypad.script import checks

ROOT = Path(__file__).resolve().parents[2]

AXIS = """
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(9):
        with T.block("B"):
            vi = T.axis.spatial(16, i * 2)
            A[vi] = 0.0
"""

READS = """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[0:4])
            T.writes(B[vi])
            B[vi] = A[vi]
"""

# Extents the parser cannot fold (``(vi + 1) * 4 - vi * 4``): the model decides them.
MATCH_GOOD = """
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            Asub = T.match_buffer(A[vi * 4:(vi + 1) * 4], (4,))
            Asub[0] = 0.0
"""
MATCH_BAD = MATCH_GOOD.replace("(4,))", "(3,))")

PROGRAM = f"""
import json, sys
from polypad.script import parse
from polypad.errors import ParseError

def refusal(text):
    try:
        parse(text)
    except ParseError as err:
        return [err.message, err.lineno, err.col]
    return None

out = {{name: refusal(text) for name, text in
        (("axis", {AXIS!r}), ("reads", {READS!r}), ("match_good", {MATCH_GOOD!r}),
         ("match_bad", {MATCH_BAD!r}))}}
out["deciders"] = sorted(m for m in sys.modules if m in ("analyses.touched", "analyses.prover"))
print(json.dumps(out))
"""


def _refusal(text: str):
    with pytest.raises(pp.ParseError) as info:
        pp.parse(text)
    return [info.value.message, info.value.lineno, info.value.col]


def test_a_bare_import_of_the_script_refuses_what_the_model_proves_wrong():
    found = subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAM)], cwd=ROOT,
                           capture_output=True, text=True, check=True)
    out = json.loads(found.stdout)
    assert out["axis"] == ["T.axis.spatial(16, i * 2) binds vi to 16 at i = 8, outside its "
                           "domain [0, 16)", 6, 18]
    assert out["reads"][0].startswith("block 'B' reads A[4] (at i = 4), which its T.reads "
                                      "does not declare")
    assert out["reads"][1:] == [7, 13]
    assert out["match_good"] is None
    assert out["match_bad"] == ["T.match_buffer region A[vi * 4:(vi + 1) * 4] has extent "
                                "(vi + 1) * 4 - vi * 4 on axis 0, where the buffer shape "
                                "needs 3", 7, 35]
    assert out["deciders"] == []  # the checks ask the model, never the deciders
    # In this process, after `import polypad`, the same refusals.
    for name, text in (("axis", AXIS), ("reads", READS), ("match_bad", MATCH_BAD)):
        assert _refusal(text) == out[name], name


def test_the_model_fills_the_parsers_slots():
    assert checks._axes is check_axes
    assert checks._regions is check_declared
    assert checks._equal is equal_everywhere


def test_a_parse_before_the_model_registers_is_an_internal_error_not_a_skipped_check(
        monkeypatch):
    monkeypatch.setattr(checks, "_axes", None)
    with pytest.raises(AssertionError, match="has not registered the block axis check"):
        pp.parse(AXIS)
    pp.parse(MATCH_GOOD.replace("vi = T.axis.spatial(4, i)", "vi = i"))  # nothing to check


def test_block_regions_keeps_the_name_the_docs_gave_it():
    import importlib

    home = importlib.import_module("analyses.block_regions")
    # (``import polypad.script.block_regions as m`` would find the function
    # ``polypad.script``, which the front door names ``script``.)
    documented = importlib.import_module("polypad.script.block_regions")

    for name in ("block_regions", "BlockRegions", "Undecided"):
        assert getattr(documented, name) is getattr(home, name)
