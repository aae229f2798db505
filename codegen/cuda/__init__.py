"""The CUDA target: kernels emitted as ``numba.cuda`` Python source.

:class:`CudaTarget` (:mod:`.target`) is ``codegen.build(f, target="cuda")``.
:mod:`.emit` writes the module (statements, bound loops, barriers),
:mod:`.expr` its expressions, :mod:`.runtime` compiles it and launches the
kernels, importing ``numba.cuda`` only then.  Where the barriers go and which
bindings race is decided by :mod:`analyses.gpu_sync`.  docs/cuda.md has the
whole story.
"""

from .target import CudaTarget

__all__ = ["CudaTarget"]
