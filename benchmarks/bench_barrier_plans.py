"""How long do the GPU example schedules take with the barrier planner's remembered
isl relations (:mod:`analyses.gpu_isl_memo`) and without?

``sch.bind`` checks that the function it makes cannot race by planning the
barriers of every launch (:func:`analyses.gpu_sync.plan_barriers`), about 15
times per SGEMM schedule.  Each schedule below is built

- ``afresh``: every relation computed anew (:func:`computing_afresh`: as
  before the memory existed);
- ``cold``: with the memory emptied first, so that only the binds of this one
  schedule reuse each other's relations (a first schedule in a process);
- ``warm``: right after the cold one, with its relations remembered (the same
  schedule built again, as tests and tuners do),

best of ``--repeat`` runs, the three measured in turn in each run, and the
time spent in ``plan_barriers`` is given for each.  Every configuration must
give the same function (checked by its printed text).

Run: ``python benchmarks/bench_barrier_plans.py [--repeat 2]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import analyses.gpu_sync as gpu_sync  # noqa: E402
from analyses.gpu_isl_memo import computing_afresh, forget  # noqa: E402
from polypad.examples import conv_layer, matmul  # noqa: E402
from polypad.ir.show import show  # noqa: E402

#: name -> (function, schedule)
SCHEDULES = {
    "matmul (one stage)": (matmul.matmul, lambda f: matmul.schedule_cuda(f, double_buffer=False)),
    "conv layer": (conv_layer.conv_layer, conv_layer.schedule_cuda),
    "SGEMM (double-buffered)": (matmul.matmul, matmul.schedule_cuda),
}

_planning = [0.0, 0]  # seconds in plan_barriers, calls
_plan = gpu_sync.plan_barriers


def _timed_plan(func):
    start = time.perf_counter()
    try:
        return _plan(func)
    finally:
        _planning[0] += time.perf_counter() - start
        _planning[1] += 1


def _run(make, schedule) -> tuple[float, float, int, str]:
    func = make()
    _planning[:] = [0.0, 0]
    start = time.perf_counter()
    sch = schedule(func)
    return time.perf_counter() - start, _planning[0], _planning[1], show(sch.func)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    gpu_sync.plan_barriers = _timed_plan  # check_gpu imports it when it runs
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.repeat}")
    print(f"{'schedule':26} {'plans':>5} {'afresh s':>9} {'(plan)':>7} {'cold s':>7} "
          f"{'(plan)':>7} {'warm s':>7} {'(plan)':>7} {'cold/afresh':>11}")
    for name, (make, schedule) in SCHEDULES.items():
        best: dict[str, tuple[float, float]] = {}
        texts = set()
        for _ in range(args.repeat):
            with computing_afresh():
                runs = {"afresh": _run(make, schedule)}
            forget()
            runs["cold"] = _run(make, schedule)
            runs["warm"] = _run(make, schedule)
            calls = runs["afresh"][2]
            for kind, (total, planning, _, text) in runs.items():
                texts.add(text)
                if kind not in best or total < best[kind][0]:
                    best[kind] = (total, planning)
        assert len(texts) == 1, f"{name}: the configurations scheduled different functions"
        cells = " ".join(f"{best[k][0]:7.2f} {best[k][1]:7.2f}" for k in ("cold", "warm"))
        print(f"{name:26} {calls:5d} {best['afresh'][0]:9.2f} {best['afresh'][1]:7.2f} "
              f"{cells} {best['cold'][0] / best['afresh'][0]:11.2f}")


if __name__ == "__main__":
    main()
