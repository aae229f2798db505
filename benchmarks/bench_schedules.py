"""How long do the GPU example schedules take on polypad's side, with the dataflow of a
loop's statements (:mod:`analyses.dataflow_window`) and with the whole function's?

``vectorize``, ``decompose_reduction``, ``reorder`` and ``cache_read``/``cache_write``
ask about the pairs of instances within one run of a loop; each schedule below is
built

- ``whole``: every such question asked of the whole function's dataflow
  (:func:`computing_whole`: as before), and
- ``window``: of the statements under the loop,

in turn in each of ``--repeat`` runs, best of them, with the barrier planner's
memory emptied before each (:func:`analyses.gpu_isl_memo.forget`: a first schedule
in a process).  Times are of this process's CPU (``time.process_time``: the machine
may be shared) and wall clock, and the time spent in ``value_flow`` is given.  Both
must give the same function (checked by its printed text).

Run: ``python benchmarks/bench_schedules.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

import analyses.dataflow as dataflow  # noqa: E402
from analyses.dataflow_window import computing_whole  # noqa: E402
from analyses.gpu_isl_memo import forget  # noqa: E402
from polypad.examples import conv_layer, matmul  # noqa: E402
from polypad.ir.show import show  # noqa: E402

#: name -> (function, schedule)
SCHEDULES = {
    "SGEMM (default: runs of 4)": (matmul.matmul, matmul.schedule_cuda),
    "SGEMM (vector=1)": (matmul.matmul, lambda f: matmul.schedule_cuda(f, vector=1)),
    "conv layer": (conv_layer.conv_layer, conv_layer.schedule_cuda),
}

_flow = [0.0]
_value_flow = dataflow.value_flow


def _timed_value_flow(*args):
    start = time.process_time()
    try:
        return _value_flow(*args)
    finally:
        _flow[0] += time.process_time() - start


def _run(make, schedule, whole: bool) -> tuple[float, float, float, str]:
    func = make()
    forget()
    _flow[0] = 0.0
    with computing_whole() if whole else contextlib.nullcontext():
        cpu, wall = time.process_time(), time.perf_counter()
        sch = schedule(func)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, _flow[0], show(sch.func)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    dataflow.value_flow = _timed_value_flow  # _Flows.compute looks it up when it runs
    # Imports and first compilations out of the way: a tiny schedule of each kind.
    matmul.schedule_cuda(matmul.matmul(12, 20, 7), threads=2, per_thread=4, k_tile=4)
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.repeat}; "
          "seconds of CPU (wall), value_flow's CPU")
    print(f"{'schedule':28} {'whole':>14} {'(flow)':>7} {'window':>14} {'(flow)':>7} "
          f"{'window/whole':>12}")
    for name, (make, schedule) in SCHEDULES.items():
        best: dict[str, tuple[float, float, float]] = {}
        texts = set()
        for _ in range(args.repeat):
            for kind in ("whole", "window"):
                cpu, wall, flow, text = _run(make, schedule, kind == "whole")
                texts.add(text)
                if kind not in best or cpu < best[kind][0]:
                    best[kind] = (cpu, wall, flow)
        assert len(texts) == 1, f"{name}: the two ways scheduled different functions"
        cells = " ".join(f"{best[k][0]:6.2f} ({best[k][1]:5.2f}) {best[k][2]:7.2f}"
                         for k in ("whole", "window"))
        print(f"{name:28} {cells} {best['window'][0] / best['whole'][0]:12.2f}")


if __name__ == "__main__":
    main()
