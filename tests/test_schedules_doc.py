"""docs/schedules.md does what it says.

Every ``python`` block of the document runs here.  The blocks of the primitive
reference share the kernels of its first block; a block whose last line is a
comment ``# -> ErrorClass: text`` must raise that error, with that text in its
message, at its last statement, and every other block must run.  Each recipe
(a block under "## Recipes" defining ``kernel``, ``schedule``, ``SIZES`` and
``SMALL``) is scheduled at its small sizes, replayed from its trace, and run
against the plain kernel on random inputs with the reference executor (and,
marked ``numba``, once with Numba); it is also scheduled at the sizes it shows.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import codegen
import polypad as pp
from polypad import errors
from polypad.ir.structural import assert_structural_equal

DOC = (Path(__file__).resolve().parent.parent / "docs" / "schedules.md").read_text()
REFERENCE = DOC[DOC.index("\n## Primitive reference\n"):DOC.index("\n## Recipes\n")]
RECIPES = DOC[DOC.index("\n## Recipes\n"):]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)
EXPECT = re.compile(r"^# -> (\w+): (.*)$")


def _heading(text: str, block: str) -> str:
    before = text[:text.index(block)]
    return re.findall(r"^#+ (.+)$", before, re.M)[-1]


REFERENCE_BLOCKS = BLOCK.findall(REFERENCE)
RECIPE_BLOCKS = BLOCK.findall(RECIPES)


def _setup() -> dict:
    namespace: dict = {}
    exec(compile(REFERENCE_BLOCKS[0], "schedules.md: kernels", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("block", REFERENCE_BLOCKS[1:],
                         ids=[_heading(REFERENCE, b) for b in REFERENCE_BLOCKS[1:]])
def test_each_reference_block_runs_or_refuses_as_it_says(block):
    namespace = _setup()
    lines = block.rstrip("\n").splitlines()
    expect = EXPECT.match(lines[-1])
    name = f"schedules.md: {_heading(REFERENCE, block)}"
    if expect is None:
        exec(compile(block, name, "exec"), namespace)
        return
    error_class, text = expect.groups()
    body = lines[:-1]
    # Everything but the last statement runs; the last one raises.
    last = max(k for k, line in enumerate(body) if line and not line.startswith((" ", "#")))
    exec(compile("\n".join(body[:last]), name, "exec"), namespace)
    with pytest.raises(getattr(errors, error_class)) as info:
        exec(compile("\n".join(body[last:]), name, "exec"), namespace)
    assert type(info.value).__name__ == error_class
    assert text.rstrip(".") in str(info.value).replace("\n", " "), str(info.value)


def _recipe(block: str) -> dict:
    namespace: dict = {}
    exec(compile(block, f"schedules.md: {_heading(RECIPES, block)}", "exec"), namespace)
    return namespace


def _inputs(func, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        if p.dtype.startswith("float"):
            out.append(rng.standard_normal(p.shape).astype(p.dtype))
        else:
            out.append(rng.integers(-100, 100, p.shape).astype(p.dtype))
    return out


def _run(func, target: str) -> list[np.ndarray]:
    arrays = _inputs(func)
    codegen.build(func, target=target)(*arrays)
    return arrays


def _same(want, got) -> None:
    for w, g in zip(want, got, strict=True):
        if w.dtype.kind == "f":  # a recipe may rfactor a float sum: it reassociates
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
        else:
            np.testing.assert_array_equal(g, w)


IDS = [_heading(RECIPES, b) for b in RECIPE_BLOCKS]


def test_every_kernel_kind_has_a_recipe():
    kinds = ["Elementwise", "Stencil and pipeline", "Row reduction", "Full reduction",
             "Argmax", "Scan", "Matmul", "Batched small matmul", "Conv and depthwise conv",
             "Softmax", "Pooling", "Transpose"]
    assert [i.split(":")[0] for i in IDS] == kinds


@pytest.mark.parametrize("block", RECIPE_BLOCKS, ids=IDS)
def test_each_recipe_computes_what_the_plain_kernel_computes(block):
    recipe = _recipe(block)
    plain = recipe["kernel"](**recipe["SMALL"])
    sch = recipe["schedule"](plain)
    assert_structural_equal(sch.trace.apply_to(plain).func, sch.func)
    _same(_run(plain, "python"), _run(sch.func, "python"))
    # At the sizes the recipe shows, the schedule applies too.
    recipe["schedule"](recipe["kernel"](**recipe["SIZES"]))


@pytest.mark.numba
@pytest.mark.parametrize("block", RECIPE_BLOCKS, ids=IDS)
def test_each_recipe_runs_on_numba(block):
    recipe = _recipe(block)
    plain = recipe["kernel"](**recipe["SMALL"])
    sch = recipe["schedule"](plain)
    _same(_run(plain, "python"), _run(sch.func, "numba"))


def test_the_readme_points_here():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert "(docs/schedules.md)" in readme


def test_the_reference_lists_every_primitive():
    from polypad.schedule import PRIMITIVES

    listed = re.findall(r"^### `(\w+)`", REFERENCE, re.M)
    assert sorted(listed) == sorted([*PRIMITIVES, "get_loops"])
    assert pp.Schedule  # the document's entry point
