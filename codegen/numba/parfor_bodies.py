"""Parallel loop bodies optimized as the kernel's cached code is.

Numba compiles the body of a ``numba.prange`` loop (a "parfor gufunc") as a
code library of its own and finalizes it -- one run of LLVM's module pipeline
-- before the kernel that calls it.  The kernel's library then links in a copy
of the body and runs the pipeline over it again; that copy is what
``inspect_asm`` shows and what Numba's on-disk cache keeps.  In the process
that compiles the kernel, though, the body's symbols were already in the JIT
(the linked copy's are ``linkonce_odr``), so the code that runs is the first,
once-optimized one; a process that loads the kernel from the cache runs the
twice-optimized one.

The two may differ a lot.  A register tile (``cache_write(..., at=i_0)``, a
stack buffer) fed by a packed panel on the heap (a ``T.alloc_buffer`` over
:data:`.stack.MAX_STACK_BYTES`, :mod:`.aligned`) is still memory when the
SLP vectorizer runs in the first pipeline: the tile's stores are then checked
against the panel's loads, whose pointer LLVM reads back from the reshaped
array's struct, and the vectorizer gives up -- the tile's 8 x 32 updates stay
256 scalar multiply-adds.  Only later in that pipeline does LICM keep the tile
in registers; the second pipeline finds it there and packs it into 16-wide
FMAs.  (With the panel on the stack too, both are allocas and the first
pipeline packs it already.)  In the 1024^3 matmul with a 32 KB panel that is
4.7 GFLOP/s in the compiling process against 219 from the cache.

So while a kernel compiles (:func:`optimized_as_cached`), a parfor body's
library runs the full module pipeline a second time after Numba's own
optimization, as the kernel's library does to its copy: the compiling process
runs the code the cache will hold.  The cost is one more pipeline over the
body's module, which Numba runs over it anyway when it links it into the
kernel.  Everything happens under Numba's compiler lock, so no compilation
outside the window sees the change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from numba.core import codegen
from numba.core.compiler_lock import global_compiler_lock

#: Numba's name for the code library of a ``prange`` body (parfor_lowering.py).
BODY_PREFIX = "__numba_parfor_gufunc_"


def is_parfor_body(library) -> bool:
    """Whether Numba's code ``library`` holds a parallel loop's outlined body."""
    return library.name.startswith(BODY_PREFIX)


def _optimize_like_the_linked_copy(library) -> None:
    """One more full module pipeline over ``library``'s final module: what the
    kernel's own library runs over the copy it links in."""
    passes, builder = library._codegen._module_pass_manager()
    passes.run(library._final_module, builder)


@contextlib.contextmanager
def optimized_as_cached() -> Iterator[None]:
    """Compile with parallel loop bodies optimized as their cached copies are.

    The hooks are Numba's private ones (Numba 0.68 has them); where a Numba
    lacks them the block compiles as Numba does, the body optimized once."""
    numba_optimize = getattr(codegen.CPUCodeLibrary, "_optimize_final_module", None)
    if numba_optimize is None or not hasattr(codegen.JITCPUCodegen, "_module_pass_manager"):
        yield
        return
    with global_compiler_lock:

        def optimize(library):
            numba_optimize(library)
            if is_parfor_body(library):
                _optimize_like_the_linked_copy(library)

        codegen.CPUCodeLibrary._optimize_final_module = optimize
        try:
            yield
        finally:
            codegen.CPUCodeLibrary._optimize_final_module = numba_optimize
