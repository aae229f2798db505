"""Every RFC 0077 example, run by the reference executor and by its emitted
source on inputs that honour its assumptions (the reference executor checks
them).  The source runs as plain Python here (``numba.njit`` replaced by the
identity, ``prange`` by ``range``): that checks the emitter's meaning --
precedence, floor division, lets, unrolling, helpers -- over a hundred
functions without a hundred Numba compiles (``test_numba.py`` compiles)."""

import types
from pathlib import Path

import numpy as np
import pytest
from codegen_support import copy
from inputs_support import make_inputs

import codegen
from analyses import Element
from codegen.numba.aligned import python_aligned_zeros
from codegen.numba.stack import python_stack_zeros
from polypad.errors import OutOfBoundsError
from polypad.ir.nodes import Buffer, IRModule
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"
# These read A[4, _] of a (4, 4) buffer, as the RFC wrote them: build refuses them.
OUT_OF_BOUNDS = {"branching_conv1d_before.py", "overcompute_conv1d_after.py"}
FAKE_NUMBA = types.SimpleNamespace(njit=lambda **flags: (lambda f: f), prange=range,
                                   carray=lambda data, shape: data.reshape(shape))
STACK_IMPORT = "from codegen.numba.stack import stack_zeros as _pp_stack_zeros\n"
HEAP_IMPORT = "from codegen.numba.aligned import aligned_zeros as _pp_aligned_zeros\n"


def functions():
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = parse(path.read_text(), str(path))
        for func in parsed.funcs if isinstance(parsed, IRModule) else (parsed,):
            yield pytest.param(path.name, func, id=f"{path.stem}:{func.name}")


def as_python(source: str):
    namespace = {"numba": FAKE_NUMBA, "_pp_stack_zeros": python_stack_zeros,
                 "_pp_aligned_zeros": python_aligned_zeros}
    source = source.replace("import numba\n", "").replace(STACK_IMPORT, "").replace(HEAP_IMPORT, "")
    exec(compile(source, "<kernel>", "exec"), namespace)
    return namespace["kernel"]


@pytest.mark.parametrize("filename, func", list(functions()))
def test_emitted_source_matches_reference(filename, func):
    if filename in OUT_OF_BOUNDS:
        for target in ("python", "numba"):
            with pytest.raises(OutOfBoundsError, match=r"element: A\[4, 0\]") as info:
                codegen.build(func, target=target)
            assert info.value.evidence.element == Element("A", (4, 0))
        return
    reference = codegen.build(func, target="python")
    args = make_inputs(func, np.random.default_rng(1))
    expected, got = copy(args), copy(args)
    reference(*expected)
    kernel = as_python(codegen.build(func).source)
    with np.errstate(all="ignore"):
        kernel(*got)
    for param, a, b in zip(func.params, got, expected, strict=True):
        if isinstance(param, Buffer):
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=param.name)
