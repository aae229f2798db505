"""Shared pytest configuration."""


def pytest_configure(config):
    # Numba compilation dominates the run time of the example tests; the marker lets a
    # quick run deselect it with `-m "not numba"`.
    config.addinivalue_line("markers", "numba: compiles Numba kernels (slow on a cold cache)")
