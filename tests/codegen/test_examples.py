"""Every RFC 0077 example, run by the reference executor and by its emitted
source.  The source runs as plain Python here (``numba.njit`` replaced by the
identity, ``prange`` by ``range``): that checks the emitter's meaning --
precedence, floor division, lets, unrolling, helpers -- over a hundred
functions without a hundred Numba compiles (``test_numba.py`` compiles)."""

import types
from pathlib import Path

import numpy as np
import pytest
from codegen_support import copy, random_args

import codegen
from polypad.errors import ExecutionError
from polypad.ir.nodes import Buffer, IRModule, Var
from polypad.script import parse

EXAMPLES = Path(__file__).parent.parent / "examples" / "rfc0077"
# These read A[4, _] of a (4, 4) buffer, as the RFC wrote them.
OUT_OF_BOUNDS = {"branching_conv1d_before.py", "overcompute_conv1d_after.py"}
FAKE_NUMBA = types.SimpleNamespace(njit=lambda **flags: (lambda f: f), prange=range)


def functions():
    for path in sorted(EXAMPLES.glob("*.py")):
        parsed = parse(path.read_text(), str(path))
        for func in parsed.funcs if isinstance(parsed, IRModule) else (parsed,):
            yield pytest.param(path.name, func, id=f"{path.stem}:{func.name}")


def as_python(source: str):
    namespace = {"numba": FAKE_NUMBA}
    exec(compile(source.replace("import numba\n", ""), "<kernel>", "exec"), namespace)
    return namespace["kernel"]


def args_for(func, seed):
    extents = {s.name: 6 for p in func.params if isinstance(p, Buffer)
               for s in p.shape if isinstance(s, Var)}
    extents.update({p.name: 6 for p in func.params if isinstance(p, Var)})
    return random_args(func, seed, **extents)


@pytest.mark.parametrize("filename, func", list(functions()))
def test_emitted_source_matches_reference(filename, func):
    reference = codegen.build(func, target="python")
    args = args_for(func, seed=1)
    if filename in OUT_OF_BOUNDS:
        with pytest.raises(ExecutionError, match=r"load of A\[4, 0\] is outside"):
            reference(*args)
        return
    expected, got = copy(args), copy(args)
    reference(*expected)
    kernel = as_python(codegen.build(func).source)
    with np.errstate(all="ignore"):
        kernel(*got)
    for param, a, b in zip(func.params, got, expected, strict=True):
        if isinstance(param, Buffer):
            np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=param.name)
