"""A view's own shape bounds its accesses in the cuda target too (codegen.cuda.guards),
on Numba's CUDA simulator: an index outside the view but inside the memory
behind it is recorded in the flag array and raised by the host as the
reference executor's BoundsCheckError, naming the view.  (The cuda target
reads quasi-affine indices only, so the accesses here are left to run time by
a data-dependent ``if``, not by a gather.)"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from polypad.errors import BoundsCheckError
from polypad.script import parse

LOAD = '''
@T.prim_func
def load(A: T.Buffer((16,), "int32"), X: T.Buffer((4,), "int32"),
         B: T.Buffer((4,), "int32")):
    A_1 = T.decl_buffer((8,), "int32", data=A.data, elem_offset=4)
    for i in T.thread_binding(4, thread="threadIdx.x"):
        if X[i] > 0:
            B[i] = A_1[i + 5]
'''

# A 2-D view: [1, 4] is element 2 + 4 + 4 = 10 of A's 16, outside the view's rows of 4.
STORE_2D = '''
@T.prim_func
def store_2d(A: T.Buffer((16,), "int32"), X: T.Buffer((4,), "int32"),
             B: T.Buffer((4,), "int32")):
    A_2 = T.decl_buffer((3, 4), "int32", data=A.data, elem_offset=2)
    for i in T.thread_binding(4, thread="threadIdx.x"):
        if X[i] > 0:
            A_2[1, i + 2] = B[i]
'''


def ends(text: str, x: list[int], **options) -> tuple:
    """How the cuda kernel (with ``options``) and the reference executor each ended
    on the same inputs: the BoundsCheckError's message, or the buffers."""
    out = []
    for target, extra in (("cuda", options), ("python", {})):
        args = [np.arange(16, dtype="int32"), np.array(x, "int32"),
                np.arange(100, 104, dtype="int32")]
        try:
            codegen.build(parse(text), target=target, **extra)(*args)
        except BoundsCheckError as err:
            out.append(str(err))
        else:
            out.append([a.tolist() for a in args])
    return tuple(out)


@pytest.mark.parametrize("options", [{}, {"boundscheck": True}])
@pytest.mark.parametrize("text, x, message", [
    (LOAD, [0, 1, 0, 1], "load of A_1[8] is outside its shape (8,) in 'load' at "
                         "<string>:8 (as written: A_1[i + 5])"),
    (STORE_2D, [0, 1, 1, 0], "store to A_2[1, 4] is outside its shape (3, 4) in 'store_2d' "
                             "at <string>:8 (as written: A_2[1, i + 2])"),
])
def test_an_index_outside_the_view_fails_as_in_the_reference(text, x, message, options):
    assert ends(text, x, **options) == (message, message)


def test_inside_the_view_the_kernel_computes_the_reference():
    got, want = ends(LOAD, [1, 1, 1, 0])
    assert got == want and got[2] == [9, 10, 11, 103]
    got, want = ends(STORE_2D, [1, 1, 0, 0])
    assert got == want and got[0][8:10] == [100, 101]


def test_the_view_is_tested_before_the_memory():
    source = codegen.build(parse(LOAD), target="cuda").source
    assert ("B[i] = A_flat[_pp_at_1((4 + (i + 5) if _pp_inside_1(i + 5, (8,), 0, bounds_fail) "
            "else 0), A_flat.shape, 1, bounds_fail)]") in source
    source = codegen.build(parse(STORE_2D), target="cuda").source
    assert "if _pp_inside_2(_w, _w_1, (3, 4,), 0, bounds_fail) and " \
        "_pp_inside_1(_g, A_flat.shape, 1, bounds_fail):" in source


def test_random_views_agree_with_the_reference():
    rng = np.random.default_rng(7)
    failures = 0
    for _ in range(3):
        count = int(rng.integers(2, 9))
        offset = int(rng.integers(0, 16 - count + 1))
        shift = int(rng.integers(0, count + 2))
        text = LOAD.replace("(8,)", f"({count},)").replace("elem_offset=4",
                                                           f"elem_offset={offset}")
        text = text.replace("i + 5", f"i + {shift}")
        for _ in range(3):
            x = rng.integers(-1, 2, 4).tolist()
            got, want = ends(text, x)
            assert got == want, (text, x)
            failures += isinstance(got, str)
    assert failures > 0
