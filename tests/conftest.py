"""Shared pytest configuration."""


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
