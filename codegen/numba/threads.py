"""How parallel kernels wait: OpenMP's idle workers sleep rather than spin.

Numba runs a parallel loop on its threading layer; where GNU OpenMP loads (the
usual case on Linux) that is ``omp``, and libgomp's idle workers *spin* for
a while (300000 turns, about a millisecond) before they sleep, both after a
parallel region and at its end while the other threads finish.  On a machine
whose cores other processes also use, a spinning worker holds a core that
the thread it waits for needs, and that thread runs a time slice later: on
the shared 2-core machine, with one more core busy, the 128 x 4094 row sum
(0.03 to 0.08 ms serially) took 27 to 37 ms a call, and the 4096 x 4094 one
ran up to 3x slower than its serial form (``benchmarks/bench_threading.py``).
With the workers sleeping at once (``OMP_WAIT_POLICY=passive``), the small
one took 0.04 to 0.09 ms (1.15 to 1.35x its serial form: waking the worker)
and the large one about its serial time or less; Numba's ``workqueue`` layer,
the other one here (TBB is not installed), cost 1.7 to 3.2x the serial time
on the small kernel, busy or not, and spinning 1000 turns 2.8x.  On a quiet
machine spinning saves the wake-up (microseconds) on back-to-back calls of
tiny kernels only.

So, when this module is imported (by ``codegen.numba``), the environment gets
``OMP_WAIT_POLICY=passive`` unless it says otherwise: libgomp reads it once,
when it is loaded, which Numba does at the first parallel call.  The user's
own choice wins -- ``OMP_WAIT_POLICY=active`` or ``GOMP_SPINCOUNT=<n>`` set
before, or ``NUMBA_THREADING_LAYER`` for another layer (then this setting does
nothing) -- and a process that loaded libgomp before (it then reads the
environment no more) keeps what it had: :func:`wait_policy` says which.
"""

from __future__ import annotations

import os

#: The variables that say how OpenMP's workers wait; a user who sets one decides.
USER_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
DEFAULT_POLICY = "passive"
_set_here = False


def _libgomp_loaded() -> bool:
    try:
        with open("/proc/self/maps") as maps:
            return any("libgomp" in line for line in maps)
    except OSError:  # no /proc: not Linux, where Numba's omp layer is not libgomp's
        return False


def configure() -> None:
    """Make OpenMP's workers sleep when idle, unless the environment already says
    how they wait or libgomp is loaded (see the module's docstring)."""
    global _set_here
    if any(name in os.environ for name in USER_SETTINGS) or _libgomp_loaded():
        return
    os.environ["OMP_WAIT_POLICY"] = DEFAULT_POLICY
    _set_here = True


def wait_policy() -> str:
    """How OpenMP's workers wait in this process, in words: polypad's default, the
    user's setting, or libgomp's own where it was loaded before polypad."""
    if _set_here:
        return f"OMP_WAIT_POLICY={DEFAULT_POLICY} (polypad's default)"
    chosen = [f"{name}={os.environ[name]}" for name in USER_SETTINGS if name in os.environ]
    if chosen:
        return f"{', '.join(chosen)} (set by the environment)"
    return "libgomp's default (it was loaded before polypad could set one)"


configure()
