"""Each axis of an undecided access decided alone (analyses.bounds_axes): the axes
recorded in ``UndecidedAccess.axes`` are the ones a run may leave, and every axis
left out of them stays inside its extent at every instance that runs, wherever the
precondition holds (checked by running every small case)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

import analyses
from polypad.errors import BoundsCheckError
from polypad.script import parse
from polypad.semantics.interpreter import _Interpreter, evaluate

# An embedding lookup (axis 0 undecided) and a column gather (axis 1 undecided).
LOOKUP = parse('''
@T.prim_func
def lookup(n: T.int32, m: T.int32, A: T.Buffer((6, 5), "float32"),
           B: T.Buffer((8,), "int32"), C: T.Buffer((8, 5), "float32")):
    for i in T.serial(n):
        for j in T.serial(m):
            C[i, j] = A[B[i], j] + A[j, B[i] % 5]
''')

# Axis 0 leaves C at i = 7 unless the data-dependent guard keeps that from running.
GUARDED = parse('''
@T.prim_func
def guarded(n: T.int32, A: T.Buffer((8,), "int32"), C: T.Buffer((10, 3), "float32")):
    for i in T.serial(n):
        for j in T.serial(3):
            if A[i] > 0:
                C[i + 3, j] = C[i + 1, 2 - j] + 1.0
''')

# int8: i + 2 wraps to -128 at n = 127, which min keeps: axis 0 undecided.
CLAMP = parse('''
@T.prim_func
def clamp(n: T.int8, B: T.Buffer((128, 4), "float32"), C: T.Buffer((128, 4), "float32")):
    for i in T.serial(n):
        for j in T.serial(4):
            C[i, j] = B[T.min(i + T.int8(2), n - T.int8(1)), j]
''')

# Axis 1 of A is inside only where the precondition holds (the store to C bounds
# n + k); without the store it leaves A at some allowed values and stays undecided.
OFFSET = parse('''
@T.prim_func
def offset(n: T.int32, k: T.int32, A: T.Buffer((8, 6), "float32"),
           B: T.Buffer((8,), "int32"), C: T.Buffer((6,), "float32")):
    for i in T.serial(n):
        C[i + k] = A[B[i], i + k]
''')
LOOSE = parse('''
@T.prim_func
def loose(n: T.int32, k: T.int32, A: T.Buffer((8, 6), "float32"),
          B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "float32")):
    for i in T.serial(n):
        C[i] = A[B[i], i + k]
''')


def axes_of(func) -> dict[str, tuple[int, ...]]:
    found = analyses.bounds_precondition(func)
    return {u.description.split(" at ")[0]: u.axes for u in found.undecided}


def test_each_axis_is_recorded_alone():
    assert axes_of(LOOKUP) == {"load of A[B[i], j]": (0,), "load of A[j, B[i] % 5]": (1,)}
    # i + 1 < 10 wherever the precondition (n < 9, from A[i]) holds: no axis left.
    assert axes_of(GUARDED) == {"load of C[i + 1, 2 - j]": (),
                                "store to C[i + 3, j]": (0,)}
    assert axes_of(CLAMP) == {"load of B[T.min(i + 2, n - 1), j]": (0,)}
    assert axes_of(OFFSET) == {"load of A[B[i], i + k]": (0,)}
    assert axes_of(LOOSE) == {"load of A[B[i], i + k]": (0, 1)}
    # An access not decided axis by axis is checked on every axis.
    undecided = analyses.bounds_precondition(OFFSET).undecided[0]
    assert undecided.checked_axes == (0,)
    assert replace(undecided, axes=None).checked_axes == (0, 1)


class _Recording(_Interpreter):
    """The reference executor, recording every access's index values and shape."""

    def __init__(self, func, seen: list):
        super().__init__(func)
        self.seen = seen

    def index(self, buffer, indices, what):
        values = tuple(int(self.eval(i)) for i in indices)
        self.seen.append(((buffer, tuple(indices)), values, self.arrays[buffer].shape))
        return super().index(buffer, indices, what)


CASES = [
    (LOOKUP, {"n": range(0, 9), "m": range(0, 6)}),
    (GUARDED, {"n": range(0, 9)}),
    (CLAMP, {"n": (0, 1, 5, 126, 127)}),
    (OFFSET, {"n": range(0, 9), "k": range(-2, 8)}),
    (LOOSE, {"n": range(0, 9), "k": range(-2, 8)}),
]


@pytest.mark.parametrize(("func", "ranges"), CASES, ids=[f.name for f, _ in CASES])
def test_every_proved_axis_stays_inside_at_every_instance_that_runs(func, ranges):
    found = analyses.bounds_precondition(func)
    proved_axes = {}  # key -> the axes proved (every axis of a proved access)
    for u in found.undecided:
        proved_axes[u.key] = set(range(len(u.indices))) - set(u.axes)
    rng = np.random.default_rng(0)
    scalars = [p for p in func.params if not hasattr(p, "shape")]
    checked = failures = runs = 0
    for values in itertools.product(*(ranges[p.name] for p in scalars)):
        env = {p: np.dtype(p.dtype).type(v) for p, v in zip(scalars, values, strict=True)}
        if not evaluate(func, found.condition, env):
            continue  # the call is refused before anything runs
        for _ in range(3):
            args, seen = [], []
            for p in func.params:
                if p in env:
                    args.append(env[p])
                elif p.dtype.startswith("int"):  # indices around the extents, some outside
                    args.append(rng.integers(-2, 10, tuple(p.shape)).astype(p.dtype))
                else:
                    args.append(rng.uniform(-1, 1, tuple(p.shape)).astype(p.dtype))
            runs += 1
            try:
                _Recording(func, seen).run(args)
            except BoundsCheckError:
                failures += 1
            for key, index, shape in seen:
                axes = (set(range(len(index))) if key in found.proved
                        else proved_axes.get(key, set()))
                for k in axes:
                    assert 0 <= index[k] < shape[k], (func.name, key, index, values)
                    checked += 1
    assert runs > 0 and failures > 0 and checked > 0  # the runs reached both kinds
