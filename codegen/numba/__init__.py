"""The Numba target: kernels emitted as Python source and compiled by Numba.

:class:`NumbaTarget` (:mod:`.target`) is what ``codegen.build(f)`` builds with
by default.  The emitter is :mod:`.emit` (statements), :mod:`.pyexpr`
(expressions) and :mod:`.functions` (the module's functions and their
flags), with what it decides on the way: :mod:`.accumulators` (reduction
targets held in locals), :mod:`.collapse` (a vectorized loop fused with the
serial loop around it), :mod:`.stack` and :mod:`.aligned` (allocations),
:mod:`.fastmath` and :mod:`.vector_width` (the options), :mod:`.checks` (the
run-time checks and the errors they become).  :mod:`.compiler` writes the
module to the kernel cache and compiles it; :mod:`.runtime` runs it safely
from threads and forked processes; :mod:`.threads` makes OpenMP's idle
workers sleep (imported first: libgomp reads the setting when it loads), and
:mod:`.slp` compiles kernels with vectorized loops with LLVM's SLP vectorizer.
"""

from .compiler import cache_dir, clear_cache
from .target import NumbaTarget
from .threads import wait_policy  # sets OMP_WAIT_POLICY before a parallel call loads libgomp

__all__ = ["NumbaTarget", "cache_dir", "clear_cache", "wait_policy"]
