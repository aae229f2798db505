"""The interop tests prove polypad.tvm against the real TVM 0.27 (the polypad[tvm] extra).

Without TVM they skip, except in CI (``CI`` set, as CI services and .ci/run do), where
TVM is part of the test extra and a missing TVM is a failure: no interop test may skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# tests/tvm_corpus.py, the TVM 0.27 corpus, is shared with the parser's tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pytest_collection_modifyitems(config, items):
    try:
        import tvm  # noqa: F401
    except ImportError as err:
        if os.environ.get("CI"):
            raise pytest.UsageError(f"CI runs the interop tests, and TVM is missing ({err}): "
                                    'install the test extra, pip install ".[test]"') from err
        skip = pytest.mark.skip(reason='TVM is not installed: pip install "polypad[tvm]"')
        here = Path(__file__).parent
        for item in items:
            if here in Path(item.fspath).parents:
                item.add_marker(skip)
