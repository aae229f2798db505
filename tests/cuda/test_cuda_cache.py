"""The emitted module is compiled from a file in the cache directory, written once, so
that numba-cuda's on-disk cache can keep the compiled kernels (codegen.cuda.cache).

The simulator has no compiled code and no cache, so what is tested here is the file:
written whole, once per text, not rewritten (its mtime keys numba-cuda's entries), the
kernels run from it; and, in a process of its own with numba-cuda's real (GPU) module,
which needs no GPU to build a cache, that the kernels loaded from it get numba-cuda's
``CUDACache`` beside the file, where a module exec'd from memory could get none.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cuda_kernels as K
import numpy as np
import pytest

import codegen
from codegen.cuda import cache

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYPAD_CACHE_DIR", str(tmp_path))
    cache.clear()
    yield tmp_path
    cache.clear()


def test_the_module_is_written_once_and_run_from_its_file(cache_dir):
    kernel = codegen.build(K.ELEMENTWISE, target="cuda")
    a = np.arange(12, dtype=np.float32)
    b = np.zeros(12, np.float32)
    kernel(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)
    path = cache_dir / f"{cache.module_name(kernel.source)}.py"
    assert path.read_text() == kernel.source
    assert [p.name for p in cache_dir.glob("polypad_cuda_*")] == [path.name]
    stamp = path.stat().st_mtime_ns
    # As a second process would: nothing loaded, the file there.  It is not rewritten.
    cache.clear()
    again = codegen.build(K.ELEMENTWISE, target="cuda")
    b[:] = 0
    again(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)
    assert path.stat().st_mtime_ns == stamp
    # Within a process one module's kernels are shared.
    assert cache.load_module(kernel.source) is cache.load_module(again.source)
    # The kernels' code comes from the file (tracebacks and numba-cuda find it).
    kernel_0 = cache.load_module(kernel.source)["KERNELS"][0][0]
    assert kernel_0.py_func.__code__.co_filename == str(path)


def test_a_damaged_file_is_replaced(cache_dir):
    source = codegen.build(K.ELEMENTWISE, target="cuda").source
    path = cache_dir / f"{cache.module_name(source)}.py"
    path.write_text(source[: len(source) // 2])
    namespace = cache.load_module(source)
    assert path.read_text() == source and len(namespace["KERNELS"]) == 1


_CACHED = """
import os
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
from numba.cuda.dispatcher import CUDACache
import codegen
from codegen.cuda import cache
from tests.cuda import cuda_kernels as K
source = codegen.build(K.ELEMENTWISE, target="cuda").source
kernel = cache.load_module(source)["KERNELS"][0][0]
assert isinstance(kernel._cache, CUDACache), kernel._cache
print(kernel._cache._cache_path)
namespace = {}
exec(compile(source, "<memory>", "exec"), namespace)
try:
    CUDACache(namespace["KERNELS"][0][0].py_func)
except RuntimeError as error:
    print("from memory:", error)
from polypad.script import parse
view = parse('''
@T.prim_func
def view(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
    A_1 = T.decl_buffer((16,), "float32", data=A.data)
    for i in T.thread_binding(4, thread="threadIdx.x"):
        B[i] = A_1[i * 5]
''')
source = codegen.build(view, target="cuda").source
assert ".reshape(" in source
kernel = cache.load_module(source)["KERNELS"][0][0]
print("reshaping:", type(kernel._cache).__name__)
"""


def test_numba_cuda_caches_the_kernels_of_the_file(tmp_path):
    path = os.pathsep.join(x for x in (str(ROOT), os.environ.get("PYTHONPATH")) if x)
    env = {**os.environ, "POLYPAD_CACHE_DIR": str(tmp_path), "NUMBA_ENABLE_CUDASIM": "0",
           "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", _CACHED], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "ImportError" in done.stderr:
        pytest.skip(f"numba-cuda's GPU module is not importable here: {done.stderr[-200:]}")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == str(tmp_path / "__pycache__")
    assert lines[1].startswith("from memory: cannot cache function 'kernel_0': no locator")
    # numba-cuda links code of its own for a reshape and cannot pickle such a kernel
    # (on a GPU its first call failed saving it): compiled in each process instead.
    assert lines[2] == "reshaping: NullCache"
