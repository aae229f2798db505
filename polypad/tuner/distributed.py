"""The Dask runner: candidates compile on a cluster's workers and are timed there,
one at a time per machine.

``autoschedule(f, client=client)`` with a ``dask.distributed.Client``: each
candidate compiles as a task on any worker (the function, its analysis and the
check are scattered to every worker once).  Its timing is then a task on the
worker that compiled it, whose machine has the kernel in its on-disk cache; the
search keeps at most one timing task in flight per machine (workers are
grouped by host), and starts the next batch of compiles only when every timing
of this one is taken, so no timing runs beside other work on its machine.

Timing tasks ask for one unit of the worker resource ``polypad_measure`` when
the cluster's workers declare it (``dask worker --resources
polypad_measure=1``), so that a worker shared with other work runs at most one
at a time; a cluster without it is used as it is.

Dask is an optional dependency: ``pip install polypad[distributed]``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from polypad.errors import MissingDependencyError

from .measure import Check, Compiled, compile_candidate, time_candidate
from .nest import Nest
from .space import Candidate

RESOURCE = "polypad_measure"


def _compile_task(func, nest, candidate, check) -> tuple[Compiled, tuple[float, float]]:
    """Compile on this worker; returns the result and the task's wall-clock span."""
    from distributed import get_worker

    start = time.time()
    compiled = compile_candidate(func, nest, candidate, check)
    compiled.where = get_worker().address
    return compiled, (start, time.time())


def _time_task(func, seed: int, best, key: str) -> tuple[list[float], tuple[float, float]]:
    """Time on this worker (the kernel it compiled, still in memory, where it is the
    worker named ``key``); returns the runs and the task's wall-clock span."""
    start = time.time()
    runs = time_candidate(func, seed, best, key=key)
    return runs, (start, time.time())


def _warm() -> None:
    import codegen.numba.compiler  # noqa: F401
    import polypad.tuner.realize  # noqa: F401


class DaskRunner:
    """Compile and time on the workers of ``client`` (a ``distributed.Client``)."""

    def __init__(self, client):
        try:
            import distributed
        except ImportError as error:  # pragma: no cover - the test extra installs it
            raise MissingDependencyError(
                "autoschedule(client=...) needs Dask: pip install 'polypad[distributed]'"
            ) from error
        if not isinstance(client, distributed.Client):
            from polypad.errors import ArgumentTypeError

            raise ArgumentTypeError("autoschedule: parameter client takes a "
                                    f"distributed.Client, not {type(client).__name__}")
        self.client = client
        workers = client.scheduler_info()["workers"]
        if not workers:
            from polypad.errors import PolypadError

            raise PolypadError("autoschedule: the Dask cluster has no workers")
        self._hosts = {address: info.get("host", address) for address, info in workers.items()}
        self._resources = all(RESOURCE in (info.get("resources") or {})
                              for info in workers.values())
        self._scattered = None
        # Each worker imports the compiler once, now and all at once, rather than in
        # its first task.
        client.run(_warm)
        #: (what, start, stop, worker) of every task, by the workers' own clocks:
        #: "compile" or "time", in seconds since the epoch.
        self.spans: list[tuple[str, float, float, str]] = []

    @property
    def description(self) -> str:
        hosts = len(set(self._hosts.values()))
        return (f"compiled on {len(self._hosts)} Dask workers, timed one at a time on each "
                f"of {hosts} machine(s)")

    @property
    def parallelism(self) -> int:
        return len(self._hosts)

    def compile(self, func, nest: Nest, candidates: list[Candidate], check: Check
                ) -> list[Compiled]:
        if self._scattered is None or self._scattered[0] is not func:
            shared = self.client.scatter([func, nest, check], broadcast=True)
            self._scattered = (func, shared)
        f, ne, ch = self._scattered[1]
        futures = [self.client.submit(_compile_task, f, ne, c, ch, pure=False)
                   for c in candidates]
        out = []
        for compiled, (start, stop) in self.client.gather(futures):
            self.spans.append(("compile", start, stop, compiled.where))
            out.append(compiled)
        return out

    def time(self, compiled: list[Compiled], seed: int, best) -> Iterator[
            tuple[Compiled, list[float]]]:
        """Time each candidate on the worker that compiled it, one per machine at a time."""
        from distributed import wait

        waiting = list(compiled)
        running: dict[str, tuple] = {}  # host -> (future, compiled)
        while waiting or running:
            for c in list(waiting):
                host = self._hosts.get(c.where, c.where)
                if host in running:
                    continue
                waiting.remove(c)
                extra = {"resources": {RESOURCE: 1}} if self._resources else {}
                future = self.client.submit(_time_task, c.func, seed, best(), c.kernel, pure=False,
                                            workers=[c.where], allow_other_workers=True,
                                            **extra)
                running[host] = (future, c)
            done = wait([f for f, _ in running.values()], return_when="FIRST_COMPLETED").done
            for host, (future, c) in list(running.items()):
                if future in done:
                    del running[host]
                    runs, (start, stop) = future.result()
                    self.spans.append(("time", start, stop, c.where))
                    yield c, runs

    def close(self) -> None:
        self._scattered = None
