"""Execute the notebooks in notebooks/ in place, so that they are stored with outputs.

    .venv/bin/python scripts/execute_notebooks.py [notebooks/NAME.ipynb ...]

Needs the test extra (``pip install ".[test]"``: nbclient, nbformat and
ipykernel).  The kernel is this Python with the repository root first on its
path, so the notebooks show the working tree's polypad.  Timings per cell are
not recorded, so that re-running changes only what the code prints.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "polypad-notebooks"


def kernel_dir(base: Path) -> Path:
    """A Jupyter data folder holding one kernelspec: this Python, the repository first
    on its path (point JUPYTER_PATH at it)."""
    spec = base / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "polypad (this checkout)",
        "language": "python",
        # interact_set stores its picture beside its sliders: an export without
        # JavaScript shows the picture, as a reader's own export would.
        "env": {"PYTHONPATH": str(ROOT)},
    }))
    return base


def execute(path: Path, timeout: int = 120) -> nbformat.NotebookNode:
    """Run every cell of the notebook at ``path`` in a fresh kernel; raises
    ``nbclient.exceptions.CellExecutionError`` on the first cell that fails."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as sockets:
        # Unix sockets, not TCP ports that another process may bind first.
        km = KernelManager(kernel_name=KERNEL) if sys.platform == "win32" else \
            KernelManager(kernel_name=KERNEL, transport="ipc", ip=str(Path(sockets) / "kernel"))
        NotebookClient(nb, km=km, timeout=timeout, record_timing=False,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    # Keep the generic kernelspec in the file: readers open it with their own python3.
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    return nb


def main(argv: list[str]) -> int:
    import os

    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["JUPYTER_PATH"] = str(kernel_dir(Path(tmp)))
        for path in paths:
            start = time.perf_counter()
            nb = execute(path)
            nbformat.write(nb, path)
            print(f"{path.name}: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
