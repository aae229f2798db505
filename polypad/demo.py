"""``polypad demo``: the RFC's ``row_summation`` through every layer.

parse (text -> IR) -> print (IR -> text, round trip) -> model (ISL domains,
accesses, schedule) -> the plain nest as a Numba kernel, then the nest
scheduled by ``polypad.examples.row_summation.schedule`` (rows in parallel,
each row summed in vector lanes) -> each timed against numpy's
``A.sum(axis=1)`` on the same data.
"""

from __future__ import annotations

import ast
import time
from importlib import resources

import numpy as np


def bundled_example(name: str = "row_summation") -> str:
    """The script text of a bundled example: its file up to the end of its last
    ``@T.prim_func`` (what follows, such as a ``schedule`` function, is Python that
    uses it, not script)."""
    text = resources.files("polypad.examples").joinpath(f"{name}.py").read_text()
    ends = [node.end_lineno for node in ast.parse(text).body
            if isinstance(node, ast.FunctionDef) and node.decorator_list]
    return "".join(text.splitlines(keepends=True)[:max(ends)]) if ends else text


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

    _step(f"4. run at {rows} x {cols}: the plain nest, then the scheduled one")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, cols), dtype=np.float32)
    expected = a.astype(np.float64).sum(axis=1)
    t_numpy = _best_of(lambda: a.sum(axis=1), repeat)
    gb = a.nbytes / 1e9
    print(f"numpy a.sum(axis=1): {t_numpy * 1e3:.2f} ms ({gb / t_numpy:.2f} GB/s), "
          f"best of {repeat}")

    from polypad.examples.row_summation import schedule

    sch = schedule(func)
    ok = True
    for title, version in (("unscheduled", func), ("scheduled", sch.func)):
        kernel = codegen.build(version)
        _step(f"{'5' if title == 'unscheduled' else '6'}. {title} Numba kernel")
        if title == "scheduled":
            print("schedule (polypad.examples.row_summation.schedule):")
            print("\n".join("  " + line for line in str(sch.trace).splitlines()))
        print(kernel.source.strip())
        start = time.perf_counter()
        kernel.compile()
        compile_s = time.perf_counter() - start
        print(f"compiled (or loaded from the on-disk cache) in {compile_s:.2f} s; "
              f"cache: {codegen.cache_dir()}")
        b = np.empty(rows, dtype=np.float32)
        kernel(a, b, rows, cols)
        error = float(np.max(np.abs(b - expected)))
        good = bool(np.allclose(b, expected, rtol=1e-3, atol=1e-2))
        ok = ok and good
        print(f"max |kernel - float64 sum| = {error:.2e}  ({'ok' if good else 'MISMATCH'})")
        t_kernel = _best_of(lambda k=kernel, b=b: k(a, b, rows, cols), repeat)
        print(f"{title} kernel: {t_kernel * 1e3:.2f} ms ({gb / t_kernel:.2f} GB/s); "
              f"numpy / kernel time: {t_numpy / t_kernel:.2f}x "
              f"({'faster' if t_kernel < t_numpy else 'slower'} than numpy)")
        if title == "unscheduled":
            # Why, in one line: the same reason the README gives.
            print("why it is slow: one thread adds each row's elements one after "
                  "another, in program order, where numpy sums in vector lanes; polypad "
                  "reorders a float sum only when a schedule asks (rfactor), and runs "
                  "rows in parallel only when asked (parallel).")
    return 0 if ok else 1
