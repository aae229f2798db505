"""Generated modules as files in polypad's cache directory, written once.

The Numba targets compile their emitted source from a file, so that Numba's
on-disk cache (keyed by the file's path and modification time) keeps the
compiled code: the CPU target (:mod:`codegen.numba.compiler`) and the ``cuda``
target (:mod:`codegen.cuda.cache`) share the directory and the rule that a
file, named by a hash of its text, is written only where it is missing, whole.

Threads and processes may write the same module at once.  A file appears
whole or not at all: it is written under a temporary name and linked into
place, which fails if another writer got there first (their text is the same,
since the name is its hash), so a file that exists is never rewritten and never
read half-written.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from polypad.concurrency import at_fork_in_child

#: Environment variable that overrides :func:`cache_dir`.
CACHE_ENV = "POLYPAD_CACHE_DIR"


def cache_dir() -> Path:
    """Where generated kernel modules live: ``$POLYPAD_CACHE_DIR`` or
    ``~/.cache/polypad/kernels``."""
    override = os.environ.get(CACHE_ENV)
    return Path(override) if override else Path.home() / ".cache" / "polypad" / "kernels"


def write_once(path: Path, source: str) -> None:
    """Make ``path`` hold ``source``, whole, unless it does already."""
    if path.exists() and _holds(path, source):
        return  # rewriting would change the mtime and void Numba's cache
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(source)
        try:
            # Atomic, and it fails where another writer (a thread, a process)
            # linked the same text first: their file, and its mtime, stay.
            os.link(tmp, path)
        except FileExistsError:
            if not _holds(path, source):
                os.replace(tmp, path)  # a stale or damaged file: replace it whole
                tmp = None
        except OSError:  # a file system without hard links: rename, also atomic
            os.replace(tmp, path)
            tmp = None
    finally:
        if tmp is not None:
            os.unlink(tmp)


def _holds(path: Path, source: str) -> bool:
    try:
        return path.read_text() == source
    except (OSError, UnicodeDecodeError):
        return False


class LoadedModules:
    """The modules a target loaded in this process, by name: each loaded once, by one
    thread, while the others asking for it wait and then share it."""

    def __init__(self):
        self._loaded: dict[str, object] = {}
        self._lock = threading.Lock()
        # A thread of the parent may have held the lock at a fork.
        at_fork_in_child(self._renew_lock)

    def _renew_lock(self) -> None:
        self._lock = threading.Lock()

    def get(self, name: str, load: Callable[[], object]):
        """The module ``name``, made by ``load()`` the first time it is asked for."""
        found = self._loaded.get(name)
        if found is not None:
            return found
        with self._lock:
            if name not in self._loaded:
                self._loaded[name] = load()
            return self._loaded[name]

    def clear(self, also: Callable[[], None] | None = None) -> None:
        """Forget every module (running ``also()`` under the same lock first)."""
        with self._lock:
            if also is not None:
                also()
            self._loaded.clear()
