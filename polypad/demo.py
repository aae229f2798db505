"""``polypad demo``: the RFC's ``row_summation`` through every layer.

parse (text -> IR) -> print (IR -> text, round trip) -> model (ISL domains,
accesses, schedule) -> Numba kernel (source, compile, run) -> timing against
numpy's ``A.sum(axis=1)`` on the same data.
"""

from __future__ import annotations

import time
from importlib import resources

import numpy as np


def bundled_example(name: str = "row_summation") -> str:
    """The text of a bundled example file."""
    return resources.files("polypad.examples").joinpath(f"{name}.py").read_text()


def _best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _step(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def run_demo(rows: int = 4096, cols: int = 4094, repeat: int = 5) -> int:
    """Run the demo and print each step; returns a process exit code."""
    import codegen
    from polypad.ir.structural import structural_equal
    from polypad.ir.verify import verify
    from polypad.model import extract
    from polypad.script import parse, script

    text = bundled_example()
    _step("1. source (read as text, parsed with ast, never executed)")
    print(text.strip())

    start = time.perf_counter()
    func = parse(text, filename="row_summation.py")
    verify(func)
    parse_ms = (time.perf_counter() - start) * 1e3
    printed = script(func)
    _step(f"2. parsed and verified in {parse_ms:.1f} ms; printed back")
    print(printed.strip())
    print(f"round trip structurally equal: {structural_equal(parse(printed), func)}")

    start = time.perf_counter()
    model = extract(func)
    model_ms = (time.perf_counter() - start) * 1e3
    _step(f"3. polyhedral model ({model_ms:.1f} ms)")
    for st in model.statements:
        print(f"{st.name}: domain {st.domain}")
        print(f"{' ' * len(st.name)}  reads  {st.reads}")
        print(f"{' ' * len(st.name)}  writes {st.writes}")
    print(f"schedule: {model.schedule}")

    kernel = codegen.build(func)
    _step("4. Numba kernel source")
    print(kernel.source.strip())
    start = time.perf_counter()
    kernel.compile()
    compile_s = time.perf_counter() - start
    print(f"compiled (or loaded from the on-disk cache) in {compile_s:.2f} s; "
          f"cache: {codegen.cache_dir()}")

    _step(f"5. run at {rows} x {cols}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    b = np.empty(rows, dtype=np.float32)
    kernel(a, b, rows, cols)
    expected = a.astype(np.float64).sum(axis=1)
    error = float(np.max(np.abs(b - expected)))
    ok = np.allclose(b, expected, rtol=1e-3, atol=1e-2)
    print(f"max |kernel - float64 sum| = {error:.2e}  ({'ok' if ok else 'MISMATCH'})")

    t_kernel = _best_of(lambda: kernel(a, b, rows, cols), repeat)
    t_numpy = _best_of(lambda: a.sum(axis=1), repeat)
    gb = a.nbytes / 1e9
    print(f"\n{'implementation':<28}{'best of ' + str(repeat):>14}{'GB/s':>10}")
    print(f"{'polypad Numba kernel':<28}{t_kernel * 1e3:>11.2f} ms{gb / t_kernel:>10.2f}")
    print(f"{'numpy a.sum(axis=1)':<28}{t_numpy * 1e3:>11.2f} ms{gb / t_numpy:>10.2f}")
    print(f"kernel / numpy time: {t_kernel / t_numpy:.2f}x")
    if t_kernel > t_numpy:
        # Why, in one line: the same reason the README gives.
        print("why: the kernel adds each row's elements one after another, in program "
              "order; numpy splits the sum into vector lanes. polypad reorders a float "
              "sum only when a schedule asks for it (sch.rfactor).")
    return 0 if ok else 1
