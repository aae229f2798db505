"""The local runner: candidates compile in a process pool, and are timed one at a
time in this process.

Compiling (building a candidate from the primitives, checking it, Numba's
compile) is most of a search's time and runs in parallel, one candidate per
worker process.  The kernels land in the on-disk kernel cache, so this process
then loads each without compiling, and times them one after another, while the
pool is idle: the search hands the pool the next batch only once the timings of
this one are taken, so no timing runs beside another candidate's work.

Processes are forked where the system can (no re-import of the caller's
``__main__``, which a script without an ``if __name__ == "__main__":`` guard
would need); a kernel run in a forked child of a process that has run a
parallel loop runs serially there (:mod:`codegen.numba.runtime`), which is
all the check needs.  Elsewhere they are spawned.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from .measure import Check, Compiled, compile_candidate, time_candidate
from .nest import Nest
from .space import Candidate

#: What every task of a pool's worker compiles against, set once per process by the
#: pool's initializer: the check's expected arrays are as large as the function's
#: outputs, too large to pickle with every candidate.
_SHARED: tuple | None = None


def _share(func, nest: Nest, check: Check) -> None:
    global _SHARED
    _SHARED = (func, nest, check)


def _compile_shared(candidate: Candidate) -> Compiled:
    func, nest, check = _SHARED
    return compile_candidate(func, nest, candidate, check)


class LocalRunner:
    """Compile on ``workers`` processes (None: one per core; 0: in this process)."""

    def __init__(self, workers: int | None = None):
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        self._pool: ProcessPoolExecutor | None = None
        self._check: Check | None = None

    @property
    def description(self) -> str:
        where = f"{self.workers} local processes" if self.workers else "this process"
        return f"compiled in {where}, timed one at a time in this process"

    @property
    def parallelism(self) -> int:
        return max(1, self.workers)

    def compile(self, func, nest: Nest, candidates: list[Candidate], check: Check
                ) -> list[Compiled]:
        """Compile ``candidates``, in parallel where there is a pool; results in order."""
        if not self.workers:
            return [compile_candidate(func, nest, c, check) for c in candidates]
        if self._pool is None or self._check is not check:
            self.close()
            method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context(method),
                initializer=_share, initargs=(func, nest, check))
            self._check = check
        futures = [self._pool.submit(_compile_shared, c) for c in candidates]
        return [f.result() for f in futures]

    def time(self, compiled: list[Compiled], seed: int, best) -> Iterator[
            tuple[Compiled, list[float]]]:
        """Time each candidate in turn here; ``best()`` is the best median so far."""
        for c in compiled:
            yield c, time_candidate(c.func, seed, best(), key=c.kernel)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
