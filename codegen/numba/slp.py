"""LLVM's SLP vectorizer for kernels with a vectorized loop.

A vectorized loop of a few iterations -- the 16 lanes of ``rfactor``'s partial
sums, a 16-wide row of a batched matmul's ``C`` -- is fully unrolled by LLVM
before its loop vectorizer runs, so that only the SLP (superword-level
parallelism) vectorizer can put the 16 copies of the body back into vector
instructions.  Numba turns the SLP vectorizer off for every function
(``NUMBA_SLP_VECTORIZE=0`` by default since Numba 0.57, numba#8852, after
miscompilations by LLVM 14's), and the unrolled lanes then run as 16 scalar
``vaddss``: the row sum's lanes loop, for one.

So a module the emitter marks (:data:`MARK`, written where the function has a
``T.vectorized`` loop: the user asked for vectors there) is compiled with the
SLP vectorizer on.  Numba reads its flag each time it builds a pass pipeline;
the flag is set only while such a kernel compiles, under Numba's own compiler
lock, so no other compilation in the process sees it.  The mark is part of
the module's text, so such kernels never share cached code with kernels built
without it.  Every kernel is checked against the reference executor in the
tests (tests/codegen/test_emit_vectors.py), which is what guards against a
miscompile.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from numba.core import config
from numba.core.compiler_lock import global_compiler_lock

#: The line a module compiled with the SLP vectorizer holds.
MARK = "_pp_slp_vectorize = True  # compiled with LLVM's SLP vectorizer (codegen/numba/slp.py)"


def wanted(namespace: dict) -> bool:
    """Whether the module whose globals are ``namespace`` asks for the SLP vectorizer."""
    return namespace.get("_pp_slp_vectorize") is True


@contextlib.contextmanager
def vectorizing(on: bool = True) -> Iterator[None]:
    """Compile with Numba's SLP flag set to ``on`` (nothing changes when False)."""
    if not on:
        yield
        return
    with global_compiler_lock:
        # Numba re-reads the environment when a compilation starts and, where a
        # variable changed since (NUMBA_ENABLE_CUDASIM set by a later import), resets
        # every flag from it, this one too: read it now, so the flag set here holds.
        config.reload_config()
        saved = config.SLP_VECTORIZE
        config.SLP_VECTORIZE = 1
        try:
            yield
        finally:
            config.SLP_VECTORIZE = saved
