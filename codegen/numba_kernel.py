"""Compiling emitted source with Numba, through an on-disk module cache.

The source is written to ``<cache_dir>/polypad_kernel_<hash>.py`` and
imported from there.  Numba's ``cache=True`` keeps its compiled code in the
``__pycache__`` beside that file, keyed by the file's path and modification
time; since the name is a hash of the text, a file is written only when it
is missing, so a kernel compiled once is loaded in any later process without
compiling.  Within a process, kernels with the same source share one
compiled function.

A kernel built for a vector width (:mod:`.vector_width`) is compiled by
another Numba pipeline, which Numba's cache does not see, so the width is
part of the hash: each width has a file, and compiled code, of its own.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import numba
from numba.core import types

from polypad.errors import BuildError
from polypad.ir import dtypes
from polypad.ir.nodes import Buffer, PrimFunc

from . import vector_width as widths
from .emit import KERNEL_NAME
from .kernel import numpy_dtype

#: Environment variable that overrides :func:`cache_dir`.
CACHE_ENV = "POLYPAD_CACHE_DIR"
_PREFIX = "polypad_kernel_"
_loaded: dict[str, object] = {}


def cache_dir() -> Path:
    """Where generated kernel modules live: ``$POLYPAD_CACHE_DIR`` or
    ``~/.cache/polypad/kernels``."""
    override = os.environ.get(CACHE_ENV)
    return Path(override) if override else Path.home() / ".cache" / "polypad" / "kernels"


def clear_cache() -> None:
    """Delete the generated modules and Numba's compiled code for them, on disk
    and in this process."""
    directory = cache_dir()
    for path in [*directory.glob(_PREFIX + "*"), *directory.glob(f"__pycache__/{_PREFIX}*")]:
        path.unlink(missing_ok=True)
    for name in [n for n in sys.modules if n.startswith(_PREFIX)]:
        del sys.modules[name]
    _loaded.clear()


def module_name(source: str, vector_width: int | None = None) -> str:
    """The module (and file) name of ``source`` built with the ``vector_width``
    option of ``codegen.build``: a hash of the text and of the width it
    resolves to, if any."""
    width = widths.resolve(vector_width)
    key = source if width is None else f"{source}\0prefer-vector-width={width}"
    return _PREFIX + hashlib.sha256(key.encode()).hexdigest()[:24]


def _write(path: Path, source: str) -> None:
    if path.exists() and path.read_text() == source:
        return  # rewriting would change the mtime and void Numba's cache
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so a concurrent process never imports half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as out:
        out.write(source)
    os.replace(tmp, path)


def load(source: str, vector_width: int | None = None):
    """The Numba dispatcher of ``kernel`` in ``source`` (not compiled yet), for the
    ``vector_width`` option of ``codegen.build``."""
    width = widths.resolve(vector_width)
    name = module_name(source, width)
    if name not in _loaded:
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
        widths.retarget(vars(module), width)
        _loaded[name] = getattr(module, KERNEL_NAME)
    return _loaded[name]


def signature(func: PrimFunc) -> tuple:
    """The Numba argument types of a checked call (see :mod:`.kernel`)."""
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
        dispatcher.compile(signature(func))
    except Exception as error:  # Numba's errors are many classes; report them as one
        raise BuildError(f"numba could not compile {func.name!r}: {error}\n"
                         f"source:\n{source}") from error
    return dispatcher
