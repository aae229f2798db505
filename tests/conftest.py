"""Shared pytest configuration."""

import os

# Every pass verifies its result ("valid IR in, valid IR out"): a pass that builds
# ill-formed IR fails in the test that runs it (see polypad.transform._budget).
os.environ["POLYPAD_VERIFY_PASSES"] = "1"


def pytest_configure(config):
    # Numba compilation dominates the run time of the example tests; the marker lets a
    # quick run deselect it with `-m "not numba"`.
    config.addinivalue_line("markers", "numba: compiles Numba kernels (slow on a cold cache)")


def pytest_sessionstart(session):
    # polypad makes every Z3 term in the context of its question (polypad.model.z3conv):
    # Z3's global context is shared by all threads and remembers earlier questions.  Any
    # use of it, in any test, is a bug that fails loudly here.
    import z3.z3

    def no_global_context(*args, **kwargs):
        raise AssertionError("Z3's global context was used: pass ctx= to the Z3 constructor")

    z3.z3.main_ctx = no_global_context
