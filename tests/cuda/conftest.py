"""The cuda target's tests run on Numba's CUDA simulator, so they need no GPU.

The simulator is chosen when ``numba.cuda`` is first imported, from
``NUMBA_ENABLE_CUDASIM`` (read by Numba's config when Numba is imported, which
other tests of the session may have done already, hence the attribute too).
polypad imports ``numba.cuda`` only when a cuda kernel is first called
(:mod:`codegen.cuda.runtime`), after this.  With ``NUMBA_ENABLE_CUDASIM=0`` in
the environment the same tests run on a real GPU.
"""

import os
import sys

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numba.core.config  # noqa: E402

numba.core.config.ENABLE_CUDASIM = int(os.environ["NUMBA_ENABLE_CUDASIM"])
if "numba.cuda" in sys.modules and numba.core.config.ENABLE_CUDASIM:
    # Imported for a GPU before this conftest ran: the simulator is out of reach.
    from numba import cuda

    if not cuda.is_available():
        raise RuntimeError("numba.cuda was imported before tests/cuda/conftest.py set "
                           "NUMBA_ENABLE_CUDASIM=1; run tests/cuda in a process of its own")
