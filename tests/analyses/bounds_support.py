"""The accesses a run really makes outside its buffers, for the bounds tests."""

from __future__ import annotations

import numpy as np

from codegen import lower
from codegen.interpreter import _Interpreter
from polypad.ir.nodes import Buffer, Var


class Recorder(_Interpreter):
    """The reference executor, recording every access outside a buffer instead of failing.

    The arrays have one spare element on each axis, which an access outside
    the declared ``shapes`` is clamped to, so that the run goes on."""

    def __init__(self, func, shapes: dict):
        super().__init__(func)
        self.shapes = shapes
        self.bad: list[tuple[dict, tuple[str, tuple[int, ...]]]] = []

    def index(self, buffer, indices, what):
        index = tuple(int(self.eval(i)) for i in indices)
        shape = self.shapes[buffer]
        if all(0 <= k < s for k, s in zip(index, shape, strict=True)):
            return index
        env = {v.name: int(value) for v, value in self.env.items()}
        self.bad.append((env, (buffer.name, index)))
        return tuple(min(max(k, 0), s) for k, s in zip(index, shape, strict=True))


def bad_accesses(func, **scalars) -> list:
    """``(variables, (buffer, index))`` of each access outside its buffer in a run of ``func``."""
    args, shapes = [], {}
    for p in func.params:
        if isinstance(p, Buffer):
            shapes[p] = tuple(scalars[s.name] if isinstance(s, Var) else s for s in p.shape)
            args.append(np.zeros(tuple(s + 1 for s in shapes[p]), p.dtype))
        else:
            args.append(scalars[p.name])
    recorder = Recorder(lower(func), shapes)
    recorder.run(args)
    return recorder.bad
