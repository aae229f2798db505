"""The emitted module as a file, so that numba-cuda's on-disk cache can keep its kernels.

A ``@cuda.jit`` kernel compiled from text that exists only in memory cannot
be cached: numba-cuda finds the cache by the function's source file
(``inspect.getfile``) and keys its entries by that file's modification time.
So the module is written to ``<cache_dir>/polypad_cuda_<hash>.py`` (the
Numba CPU target's directory, :func:`codegen.cache_dir`, :mod:`codegen.module_files`, and the same
write-once rule: the name is a hash of the text, a file is written only where
it is missing, atomically), compiled from there, and each kernel's caching is
turned on (``enable_caching()``, what ``cuda.jit(cache=True)`` does): the
compiled kernel goes into the ``__pycache__`` beside the file, and a later
process with the same module, the same GPU's compute capability and the same
numba-cuda loads it instead of compiling.

Numba's simulator has no compiled code and no cache; its kernels are run from
the same file.  Within a process, a module is compiled from its file once and
its kernels shared, as the CPU target shares its dispatchers.
"""

from __future__ import annotations

import hashlib
import inspect

from polypad.errors import BuildError

from ..module_files import CACHE_ENV, LoadedModules, cache_dir, write_once

PREFIX = "polypad_cuda_"
_modules = LoadedModules()


def module_name(source: str) -> str:
    """The module (and file) name of ``source``: a hash of the text."""
    return PREFIX + hashlib.sha256(source.encode()).hexdigest()[:24]


def load_module(source: str) -> dict:
    """The namespace of ``source`` (:mod:`.emit`'s text) executed from its file in the
    cache directory, its kernels' on-disk caching on (where numba-cuda has it)."""
    name = module_name(source)
    return _modules.get(name, lambda: _execute(name, source))


def _execute(name: str, source: str) -> dict:
    path = cache_dir() / f"{name}.py"
    try:  # never rewritten: a new mtime would void the entries compiled from it
        write_once(path, source)
    except OSError as error:
        raise BuildError(f"cannot write the kernel module {path}: {error}; set "
                         f"{CACHE_ENV} to a writable directory") from error
    namespace: dict = {"__name__": name, "__file__": str(path)}
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - our own text
    for kernel, _ in namespace["KERNELS"]:
        enable = getattr(kernel, "enable_caching", None)  # absent on the simulator
        if enable is not None and not _reshapes(kernel):
            enable()
    return namespace


def _reshapes(kernel) -> bool:
    """Whether ``kernel`` reshapes an array (a view's flat alias, TVM's FlattenBuffer):
    numba-cuda links CUDA code of its own for that, and refuses to pickle a kernel
    with linked code into its cache ("Cannot pickle CUDACodeLibrary with linking
    files", at the first call on a GPU), so such a kernel is compiled in each process."""
    try:
        text = inspect.getsource(kernel.py_func)
    except (AttributeError, OSError, TypeError):
        return True  # unknown: not cached, which is always safe
    return ".reshape(" in text


def clear() -> None:
    """Forget the modules loaded in this process (their files stay)."""
    _modules.clear()


def clear_files() -> None:
    """Delete the module files and numba-cuda's compiled kernels for them, and forget
    the modules loaded in this process (part of :func:`codegen.clear_cache`)."""
    directory = cache_dir()
    for path in [*directory.glob(PREFIX + "*"), *directory.glob(f"__pycache__/{PREFIX}*")]:
        path.unlink(missing_ok=True)
    clear()
