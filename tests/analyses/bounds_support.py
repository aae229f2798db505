"""The accesses a run really makes outside its buffers, for the bounds tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from codegen import lower
from polypad.ir.nodes import Buffer, Var
from polypad.semantics.interpreter import _Interpreter


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


@st.composite
def parameter_nests(draw) -> str:
    """A loop (or two) over one int32 parameter n, a guard, and a store and a load at
    quasi-affine indices in n and the counters, maybe under an assumption on n."""
    size = draw(st.integers(1, 6))
    outer = draw(st.sampled_from(["T.serial(n)", "T.serial(2, 5)", "T.serial(4)",
                                  "T.serial(n // 3)"]))
    inner = draw(st.sampled_from([None, "T.serial(3)"]))
    names = ["i"] if inner is None else ["i", "j"]

    def term() -> str:
        v = draw(st.sampled_from([*names, "n"]))
        c = draw(st.sampled_from([1, 1, -1, 2]))
        return v if c == 1 else f"{c} * {v}"

    def index() -> str:
        base = " + ".join([term() for _ in range(draw(st.integers(1, 2)))])
        base += f" + {draw(st.integers(-3, 3))}"
        shape = draw(st.sampled_from(["{}", "({}) // 2", "({}) // 4", "({}) % 5",
                                      "T.max({}, 0)"]))
        return shape.format(base)

    guard = draw(st.sampled_from([None, f"0 <= {index()}", f"{index()} < n",
                                  "n - i >= 0"]))
    # A range on both sides keeps every operation on n from wrapping.
    assume = draw(st.sampled_from([None, "n >= 2", "n <= 10", "-30 <= n and n <= 30",
                                   "-30 <= n and n <= 30"]))
    lines = [f"for i in {outer}:"]
    if inner is not None:
        lines.append(f"    for j in {inner}:")
    indent = "    " * len(lines)
    store = f"A[{index()}] = A[{index()}] + 1.0"
    if guard is not None:
        lines += [f"{indent}if {guard}:", f"{indent}    {store}"]
    else:
        lines.append(f"{indent}{store}")
    head = f"    T.assume({assume})\n" if assume else ""
    body = "\n".join("    " + line for line in lines)
    return (f"@T.prim_func\ndef f(A: T.Buffer(({size},), \"float32\"), n: T.int32):\n"
            f"{head}{body}\n")
