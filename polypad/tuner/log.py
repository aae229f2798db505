"""The tuning log: one JSON line per candidate tried, and one per search finished.

JSON lines rather than SQLite: a search appends a line per candidate and never
rewrites one, so a line is the unit of damage -- a crash mid-write or a hand
edit spoils that line alone, which the reader skips with a warning; the file
reads and diffs as text and merges by concatenation (``cat a.log b.log``),
which is how logs from several machines come together; and reading a few
thousand lines takes milliseconds.  What SQLite would add (indices, concurrent
writers) a log of a few thousand candidates per kernel does not need.

A candidate line::

    {"format": "polypad-tuning-log", "version": 1, "kind": "candidate",
     "func_hash": "...", "func": "matmul", "target": "numba", "key": "ti32-to8-o-par-vec",
     "candidate": {...}, "status": "ok", "seconds": 0.0123, "runs": [...],
     "trace": [["split", [["loop", "i"], ...]], ...], "machine": {...},
     "versions": {...}, "seed": 0, "when": "2026-11-27T12:00:00+00:00"}

``status`` is ``ok`` (timed: ``seconds`` is the median of ``runs``), or
``refused``, ``wrong`` or ``error`` (a primitive refused a step, the results
differed from the reference, the build failed: never timed, kept so that a
resumed search does not try it again).  A ``search`` line closes a search
(``exhausted`` says whether it tried the whole space).

Only lines of this format, for this function (its structural hash: the hash of
its printed script), target, machine and library versions are used: timings
from elsewhere say nothing of this machine.  A line that is not JSON or not of
this format is skipped with a :class:`TuningLogWarning`; so are lines of this
format from another machine or other library versions.  A trace read back is
replayed through the checked primitives, never trusted.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import warnings
from dataclasses import dataclass
from pathlib import Path

FORMAT = "polypad-tuning-log"
VERSION = 1


class TuningLogWarning(UserWarning):
    """Lines of a tuning log were skipped: corrupt, of another format, or from
    another machine or library versions."""


def func_hash(func, target: str) -> str:
    """The structural hash of ``func`` for ``target``: SHA-256 of its printed script."""
    from polypad.script import script

    return hashlib.sha256(f"{target}\n{script(func)}".encode()).hexdigest()


def machine() -> dict:
    """This machine, as the log records it: host name, CPU model, cores."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info
                        if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"node": platform.node(), "cpu": cpu, "cores": os.cpu_count() or 1}


def versions() -> dict:
    """The versions of what makes the kernels: polypad, Numba, llvmlite, NumPy, Python."""
    import llvmlite
    import numba
    import numpy

    from polypad._version import __version__

    return {"polypad": __version__, "numba": numba.__version__,
            "llvmlite": llvmlite.__version__, "numpy": numpy.__version__,
            "python": platform.python_version()}


@dataclass
class Entries:
    """The usable lines of a log for one function: candidates by key, and searches."""

    candidates: dict[str, dict]
    searches: list[dict]


class TuningLog:
    """A tuning log file (see the module docstring); it need not exist yet."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._machine = machine()
        self._versions = versions()

    def read(self, func_hash: str, target: str) -> Entries:
        """The usable lines for ``func_hash`` and ``target``; skipped lines are reported
        in one :class:`TuningLogWarning`."""
        candidates: dict[str, dict] = {}
        searches: list[dict] = []
        skipped: list[str] = []
        if not self.path.exists():
            return Entries(candidates, searches)
        with open(self.path, encoding="utf-8", errors="replace") as file:
            for number, line in enumerate(file, 1):
                if not line.strip():
                    continue
                why, record = self._parse(line)
                if why:
                    skipped.append(f"line {number}: {why}")
                    continue
                if record["func_hash"] != func_hash or record.get("target") != target:
                    continue  # another function's lines: a log may hold many
                if record["kind"] == "search":
                    searches.append(record)
                else:
                    candidates[record["key"]] = record
        if skipped:
            more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
            warnings.warn(f"tuning log {self.path}: skipped {len(skipped)} line(s): "
                          + "; ".join(skipped[:5]) + more, TuningLogWarning, stacklevel=3)
        return Entries(candidates, searches)

    def _parse(self, line: str) -> tuple[str, dict | None]:
        try:
            record = json.loads(line)
        except ValueError:
            return "not JSON", None
        if not isinstance(record, dict) or record.get("format") != FORMAT:
            return "not a polypad tuning record", None
        if record.get("version") != VERSION:
            return f"format version {record.get('version')!r}, not {VERSION}", None
        if record.get("kind") not in ("candidate", "search") or not isinstance(
                record.get("func_hash"), str):
            return "a record without a kind or a function hash", None
        if record.get("machine") != self._machine:
            return "recorded on another machine", None
        if record.get("versions") != self._versions:
            return "recorded with other library versions", None
        if record["kind"] == "candidate":
            ok = (isinstance(record.get("key"), str) and isinstance(record.get("trace"), list)
                  and record.get("status") in ("ok", "refused", "wrong", "error"))
            seconds = record.get("seconds")
            if not ok or (record["status"] == "ok" and not (
                    isinstance(seconds, int | float) and seconds > 0)):
                return "a candidate record with missing or bad fields", None
        return "", record

    def append(self, kind: str, func_hash: str, target: str, **fields) -> None:
        """Append one record (one line, one write)."""
        record = {"format": FORMAT, "version": VERSION, "kind": kind, "func_hash": func_hash,
                  "target": target, **fields, "machine": self._machine,
                  "versions": self._versions,
                  "when": datetime.datetime.now(datetime.timezone.utc).isoformat(
                      timespec="seconds")}
        line = json.dumps(record, separators=(",", ":")) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(line)
