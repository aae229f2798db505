"""A view's own shape bounds its accesses at run time, as in the bounds analysis
(polypad.semantics.lower_views, codegen.bounds_guards): an index outside the
view but inside the memory behind it is the BoundsCheckError of a plain
buffer, naming the view, in the reference executor and in every Numba
variant (serial, parallel, ``boundscheck=True``); an access the analysis
proved inside the view gets no check.  The cuda target's side is
tests/cuda/test_cuda_view_bounds.py."""

from __future__ import annotations

import numpy as np
import pytest
from codegen_support import calls, copy

import analyses
import codegen
from polypad.errors import BoundsCheckError, OutOfBoundsError
from polypad.script import parse

pytestmark = pytest.mark.numba

# The leftover note's gather: X = [0, 1, 10, 2] read A[14] through the view.
GATHER = '''
@T.prim_func
def gather(A: T.Buffer((16,), "int32"), X: T.Buffer((4,), "int32"),
           B: T.Buffer((4,), "int32")):
    A_1 = T.decl_buffer((8,), "int32", data=A.data, elem_offset=4)
    for i in T.serial(4):
        B[i] = A_1[X[i]]
'''

SCATTER = '''
@T.prim_func
def scatter(A: T.Buffer((16,), "int32"), X: T.Buffer((4,), "int32"),
            B: T.Buffer((4,), "int32")):
    A_1 = T.decl_buffer((8,), "int32", data=A.data, elem_offset=4)
    for i in T.serial(4):
        A_1[X[i]] = B[i]
'''

# A 2-D view: row i, column X[i]; [2, 5] is element 4 + 2 * 4 + 5 = 17 of A's 24.
GATHER_2D = '''
@T.prim_func
def gather_2d(A: T.Buffer((24,), "int32"), X: T.Buffer((4,), "int32"),
              B: T.Buffer((4,), "int32")):
    A_2 = T.decl_buffer((4, 4), "int32", data=A.data, elem_offset=4)
    for i in T.serial(4):
        B[i] = A_2[i, X[i]]
'''

SCATTER_2D = '''
@T.prim_func
def scatter_2d(A: T.Buffer((24,), "int32"), X: T.Buffer((4,), "int32"),
               B: T.Buffer((4,), "int32")):
    A_2 = T.decl_buffer((4, 4), "int32", data=A.data, elem_offset=4)
    for i in T.serial(4):
        A_2[X[i], i] = B[i]
'''

# The view's extent a parameter: the message gives its value.
SYMBOLIC = parse('''
@T.prim_func
def symbolic(n: T.int32, A: T.Buffer((16,), "int32"), X: T.Buffer((4,), "int32"),
             B: T.Buffer((4,), "int32")):
    T.assume(0 <= n and n <= 12)
    A_1 = T.decl_buffer((n,), "int32", data=A.data, elem_offset=4)
    for i in T.serial(4):
        B[i] = A_1[X[i]]
''')

PROVED = parse('''
@T.prim_func
def proved(A: T.Buffer((16,), "int32"), X: T.Buffer((4,), "int32"),
           B: T.Buffer((8,), "int32")):
    A_1 = T.decl_buffer((8,), "int32", data=A.data, elem_offset=4)
    for i in T.serial(8):
        B[i] = A_1[i] + A[X[i % 4]]
''')


def variants(text: str) -> dict:
    """The reference executor and each Numba variant of ``text``: serial, with its
    first loop parallel, and with ``boundscheck=True``."""
    serial, parallel = parse(text), parse(text.replace("T.serial(4)", "T.parallel(4)", 1))
    return {"reference": codegen.build(serial, target="python"),
            "numba": codegen.build(serial),
            "numba parallel": codegen.build(parallel),
            "numba boundscheck=True": codegen.build(serial, boundscheck=True)}


@pytest.fixture(scope="module")
def built() -> dict:
    return {text: variants(text) for text in (GATHER, SCATTER, GATHER_2D, SCATTER_2D)}


def ends(kernels: dict, args: list) -> dict:
    """How each kernel ended on its own copy of ``args``: the BoundsCheckError's
    message, or the buffers."""
    out = {}
    for name, kernel in kernels.items():
        mine = copy(args)
        try:
            kernel(*mine)
        except BoundsCheckError as err:
            out[name] = str(err)
        else:
            out[name] = [a.tolist() for a in mine]
    return out


def the_same(found: dict):
    assert len({repr(v) for v in found.values()}) == 1, found
    return next(iter(found.values()))


@pytest.mark.parametrize("text, x, message", [
    (GATHER, [0, 1, 10, 2], "load of A_1[10] is outside its shape (8,) in 'gather' at "
                            "<string>:7 (as written: A_1[X[i]])"),
    (GATHER, [0, -1, 3, 2], "load of A_1[-1] is outside its shape (8,) in 'gather' at "
                            "<string>:7 (as written: A_1[X[i]])"),
    (SCATTER, [0, 1, 8, 2], "store to A_1[8] is outside its shape (8,) in 'scatter' at "
                            "<string>:7 (as written: A_1[X[i]])"),
    (GATHER_2D, [0, 1, 5, 2], "load of A_2[2, 5] is outside its shape (4, 4) in "
                              "'gather_2d' at <string>:7 (as written: A_2[i, X[i]])"),
    (SCATTER_2D, [0, 4, 1, 2], "store to A_2[4, 1] is outside its shape (4, 4) in "
                               "'scatter_2d' at <string>:7 (as written: A_2[X[i], i])"),
])
def test_an_index_outside_the_view_inside_its_memory_fails_alike(built, text, x, message):
    size = 24 if "24" in text else 16
    args = [np.arange(size, dtype="int32"), np.array(x, "int32"),
            np.arange(100, 104, dtype="int32")]
    assert the_same(ends(built[text], args)) == message


def test_inside_the_view_every_variant_computes_the_reference(built):
    args = [np.arange(16, dtype="int32"), np.array([0, 7, 3, 2], "int32"),
            np.arange(100, 104, dtype="int32")]
    assert the_same(ends(built[GATHER], args))[2] == [4, 11, 7, 6]
    assert the_same(ends(built[SCATTER], args))[0][4:12] == [100, 4 + 1, 103, 102, 8, 9,
                                                            10, 101]


def test_the_view_is_checked_before_the_memory_and_in_the_flag_array():
    source = codegen.build(parse(GATHER)).source
    # The view's index against its own shape first, then the flat index against A.
    assert ("B[i] = A_flat[_pp_index_1((_pp_index_1(X[i], (8,), 0), np.int32(4 + X[i]))[1], "
            "A_flat.shape, 1)]") in source
    parallel = codegen.build(parse(GATHER.replace("T.serial(4)", "T.parallel(4)"))).source
    assert "_pp_inside_1(_w, (8,), 0, bounds_fail) and _pp_inside_1(_g, A_flat.shape, 1, " \
        "bounds_fail)" in parallel


def test_a_view_of_a_parameter_extent_names_its_value():
    args = [5, np.arange(16, dtype="int32"), np.array([0, 1, 5, 2], "int32"),
            np.zeros(4, "int32")]
    found = set()
    for target in ("python", "numba"):
        with pytest.raises(BoundsCheckError) as info:
            codegen.build(SYMBOLIC, target=target)(*copy(args))
        found.add(str(info.value))
    assert found == {"load of A_1[5] is outside its shape (5,) in 'symbolic' at <string>:8 "
                     "(as written: A_1[X[i]])"}


def test_an_access_proved_inside_the_view_gets_no_check():
    pre = analyses.bounds_precondition(PROVED)
    assert {b.name for b, _ in pre.proved} >= {"A_1", "B"}
    # The gather of A is undecided: its flat index is checked, A_1[i] is not.
    assert calls(codegen.build(PROVED).source) == ["_pp_index_1", "_pp_index_1"]
    assert "(8,)" not in codegen.build(PROVED).source


def test_a_decided_access_outside_the_view_is_refused_at_build():
    outside = parse(GATHER.replace("A_1[X[i]]", "A_1[i + 6]"))
    with pytest.raises(OutOfBoundsError, match="A_1"):
        codegen.build(outside)


# ------------------------------------------------------------ brute force


def random_view(rng) -> tuple[str, int, tuple]:
    """A function reading and writing through a random view of a random ``A``: its
    text, ``A``'s size and the view's shape."""
    shape = (int(rng.integers(1, 7)),) if rng.random() < 0.5 else (
        int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    count = int(np.prod(shape))
    size = count + int(rng.integers(0, 6))
    offset = int(rng.integers(0, size - count + 1))
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    at = "X[i]" if len(shape) == 1 else "X[i], X[i + 4]"
    text = f'''
@T.prim_func
def brute(A: T.Buffer(({size},), "int32"), X: T.Buffer((8,), "int32"),
          B: T.Buffer((4,), "int32")):
    V = T.decl_buffer(({dims}), "int32", data=A.data, elem_offset={offset})
    for i in T.serial(4):
        B[i] = V[{at}] + 1
    for i in T.serial(4):
        V[{at}] = B[i] * 2
'''
    return text, size, shape


def test_random_views_and_indices_agree_with_the_reference():
    rng = np.random.default_rng(2026)
    failures = 0
    for _ in range(4):
        text, size, shape = random_view(rng)
        kernels = variants(text)
        for _ in range(12):
            high = max(shape) + 2
            x = rng.integers(-2, high, 8) if rng.random() < 0.6 else rng.integers(0, 2, 8)
            args = [rng.integers(-9, 9, size).astype("int32"), x.astype("int32"),
                    np.zeros(4, "int32")]
            found = ends(kernels, args)
            # A parallel loop may stop at another failing element than the first.
            parallel = found.pop("numba parallel")
            result = the_same(found)
            assert isinstance(parallel, str) == isinstance(result, str), (text, x)
            if not isinstance(result, str):
                assert parallel == result
            failures += isinstance(result, str)
    assert 0 < failures < 48  # both ends reached


def test_lowering_keeps_the_view_access_and_a_rewriter_keeps_it_in_step():
    from polypad.ir import nodes as ir
    from polypad.ir.substitute import substitute
    from polypad.ir.visitor import walk
    from polypad.semantics.lowering import lower

    lowered = lower(parse(GATHER))
    (load,) = [x for x in walk(lowered.body)
               if isinstance(x, ir.BufferLoad) and x.view_access is not None]
    view, indices = load.view_access
    assert (load.buffer.name, view.name, view.shape) == ("A_flat", "A_1", (8,))
    assert [str(i) for i in indices] == [str(load.indices[0].b)]  # X[i], in 4 + X[i]
    loop = next(x for x in walk(lowered.body) if isinstance(x, ir.For))
    moved = substitute(loop.body, {loop.var: ir.IntImm(3)})
    (load,) = [x for x in walk(moved) if isinstance(x, ir.BufferLoad) and x.view_access]
    assert load.view_access[1] == (load.indices[0].b,)  # X[3]: the same rewrite
    assert load.indices[0].b.indices == (ir.IntImm(3),)
