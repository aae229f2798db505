"""Shared pytest configuration."""

import os

# Every pass verifies its result ("valid IR in, valid IR out"): a pass that builds
# ill-formed IR fails in the test that runs it (see polypad.transform._budget).
os.environ["POLYPAD_VERIFY_PASSES"] = "1"


def pytest_configure(config):
    # Numba compilation dominates the run time of the example tests; the marker lets a
    # quick run deselect it with `-m "not numba"`.
    config.addinivalue_line("markers", "numba: compiles Numba kernels (slow on a cold cache)")
