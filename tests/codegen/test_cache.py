"""The kernel cache: generated modules on disk, Numba's compiled code beside
them, reused by a second process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import codegen_kernels as K
import pytest

import codegen
from codegen.numba import compiler

HERE = Path(__file__).parent
ROOT = HERE.parent.parent

# Builds and runs one kernel, then reports Numba's cache statistics.
SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {here!r})
import codegen, codegen_kernels as K
k = codegen.build(K.elementwise()).compile()
a, b = np.arange(16, dtype=np.float32), np.zeros(16, np.float32)
k(a, b)
stats = k._impl.stats
print(json.dumps({{"dir": str(codegen.cache_dir()), "ok": bool((b == 2 * a + 1).all()),
                   "hits": sum(stats.cache_hits.values()),
                   "misses": sum(stats.cache_misses.values())}}))
"""


def _run_in_subprocess(cache: Path) -> dict:
    env = dict(os.environ, POLYPAD_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(here=str(HERE))], env=env,
                          capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.numba
def test_cache_dir_override_and_reuse_across_processes(tmp_path):
    first = _run_in_subprocess(tmp_path)
    assert first == {"dir": str(tmp_path), "ok": True, "hits": 0, "misses": 1}
    source = codegen.build(K.elementwise()).source
    module = tmp_path / f"{compiler.module_name(source)}.py"
    assert module.read_text() == source
    assert list((tmp_path / "__pycache__").glob(module.stem + ".kernel-*.nbi"))
    mtime = module.stat().st_mtime_ns
    second = _run_in_subprocess(tmp_path)
    assert second == {"dir": str(tmp_path), "ok": True, "hits": 1, "misses": 0}
    assert module.stat().st_mtime_ns == mtime  # not rewritten, so Numba's index holds


def test_default_cache_dir(monkeypatch):
    monkeypatch.delenv("POLYPAD_CACHE_DIR", raising=False)
    assert codegen.cache_dir() == Path.home() / ".cache" / "polypad" / "kernels"
    monkeypatch.setenv("POLYPAD_CACHE_DIR", "/some/where")
    assert codegen.cache_dir() == Path("/some/where")


def test_clear_cache_removes_only_kernel_files(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYPAD_CACHE_DIR", str(tmp_path))
    (tmp_path / "__pycache__").mkdir()
    ours = [tmp_path / "polypad_kernel_abc.py",
            tmp_path / "__pycache__" / "polypad_kernel_abc.kernel-7.py311.nbi",
            # The cuda target's modules and numba-cuda's kernels compiled from them.
            tmp_path / "polypad_cuda_abc.py",
            tmp_path / "__pycache__" / "polypad_cuda_abc.kernel_0-9.py311.nbi"]
    theirs = tmp_path / "notes.txt"
    for path in [*ours, theirs]:
        path.write_text("x")
    codegen.clear_cache()
    assert not any(p.exists() for p in ours) and theirs.exists()
