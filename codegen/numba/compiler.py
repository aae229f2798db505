"""Compiling emitted source with Numba, through an on-disk module cache.

The source is written to ``<cache_dir>/polypad_kernel_<hash>.py`` and
imported from there.  Numba's ``cache=True`` keeps its compiled code in the
``__pycache__`` beside that file, keyed by the file's path and modification
time; since the name is a hash of the text, a file is written only when it
is missing, so a kernel compiled once is loaded in any later process without
compiling.  Within a process, kernels with the same source share one
compiled function.

Threads and processes may build the same kernel at once.  A module file
appears whole or not at all: it is written under a temporary name and
linked into place, which fails if another writer got there first (their
text is the same, since the name is its hash), so a file that exists is never
rewritten and never read half-written.  Within a process a lock makes one
thread import a module while the others wait for it; Numba compiles under its
own lock.

A kernel built for a vector width (:mod:`.vector_width`) is compiled by
another Numba pipeline, which Numba's cache does not see, so the width is
part of the hash: each width has a file, and compiled code, of its own.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys

import numba
from numba.core import types

from polypad.errors import BuildError
from polypad.ir import dtypes
from polypad.ir.nodes import Buffer, PrimFunc
from polypad.semantics.values import numpy_dtype

from ..module_files import CACHE_ENV, LoadedModules, cache_dir
from ..module_files import write_once as _write
from .emit import KERNEL_NAME
from .parfor_bodies import optimized_as_cached
from .slp import vectorizing, wanted
from .vector_width import resolve as resolve_width
from .vector_width import retarget

_PREFIX = "polypad_kernel_"
_modules = LoadedModules()


def clear_cache() -> None:
    """Delete the generated modules and Numba's compiled code for them, on disk
    and in this process."""
    directory = cache_dir()
    for path in [*directory.glob(_PREFIX + "*"), *directory.glob(f"__pycache__/{_PREFIX}*")]:
        path.unlink(missing_ok=True)
    def forget_imports() -> None:
        for name in [n for n in sys.modules if n.startswith(_PREFIX)]:
            del sys.modules[name]

    _modules.clear(also=forget_imports)


def module_name(source: str, vector_width: int | None = None) -> str:
    """The module (and file) name of ``source`` built with the ``vector_width``
    option of ``codegen.build``: a hash of the text and of the width it
    resolves to, if any."""
    width = resolve_width(vector_width)
    key = source if width is None else f"{source}\0prefer-vector-width={width}"
    return _PREFIX + hashlib.sha256(key.encode()).hexdigest()[:24]


def load(source: str, vector_width: int | None = None):
    """The Numba dispatcher of ``kernel`` in ``source`` (not compiled yet), for the
    ``vector_width`` option of ``codegen.build``."""
    width = resolve_width(vector_width)
    name = module_name(source, width)
    return _modules.get(name, lambda: _import(name, source, width))


def _import(name: str, source: str, width: int | None):
    """Write and import the module ``name``; its kernel's dispatcher."""
    path = cache_dir() / f"{name}.py"
    try:
        _write(path, source)
    except OSError as error:
        raise BuildError(f"cannot write the kernel module {path}: {error}; set "
                         f"{CACHE_ENV} to a writable directory") from error
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    retarget(vars(module), width)
    return getattr(module, KERNEL_NAME)


def signature(func: PrimFunc) -> tuple:
    """The Numba argument types of a checked call (see :mod:`codegen.calling`)."""
    sig = []
    for param in func.params:
        if isinstance(param, Buffer):
            element = numba.from_dtype(numpy_dtype(param.dtype))
            sig.append(types.Array(element, len(param.shape), "C"))
        elif dtypes.is_int(param.dtype):
            sig.append(types.int64)  # a Python int
        elif dtypes.is_bool(param.dtype):
            sig.append(types.boolean)
        else:
            sig.append(numba.from_dtype(numpy_dtype(param.dtype)))
    return tuple(sig)


def compile_kernel(func: PrimFunc, source: str, vector_width: int | None = None):
    """Load ``source`` and compile its kernel for ``func``'s parameter types, for
    the ``vector_width`` option of ``codegen.build``."""
    dispatcher = load(source, vector_width)
    try:
        with vectorizing(wanted(dispatcher.py_func.__globals__)), optimized_as_cached():
            dispatcher.compile(signature(func))
    except Exception as error:  # Numba's errors are many classes; report them as one
        raise BuildError(f"numba could not compile {func.name!r}: {error}\n"
                         f"source:\n{source}") from error
    return dispatcher
