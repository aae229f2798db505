"""plot_dependences: one arrow per dependence pair, coloured by kind."""

import islpy as isl
import pytest
from viz_support import parse, with_class

import analyses
import polypad as pp
from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.viz import plot_dependences

STENCIL = pp.parse('''
@T.prim_func
def stencil(A: T.Buffer((6,), "float32"), B: T.Buffer((5,), "float32")):
    for i in T.serial(5):
        A[i] = 1.0
    for j in T.serial(5):
        B[j] = A[j + 1]
''')

NEST = pp.parse('''
@T.prim_func
def nest(A: T.Buffer((4, 5), "float32")):
    for i, j in T.grid(3, 4):
        A[i + 1, j + 1] = A[i, j] + A[i + 1, j]
''')

# flow, anti and output dependences at once: each iteration reads and rewrites acc[0].
ACCUMULATE = pp.parse('''
@T.prim_func
def accumulate(X: T.Buffer((4,), "float32"), acc: T.Buffer((1,), "float32")):
    for i in T.serial(4):
        acc[0] = acc[0] + X[i]
''')


def pairs(relation: isl.UnionMap) -> int:
    """The number of pairs in ``relation``, counted by isl."""
    total = 0
    maps = []
    relation.foreach_map(maps.append)
    for m in maps:
        total += m.wrap().count_val().to_python()
    return total


def arrows(root, kind=None):
    return with_class(root, "arrow", *([kind] if kind else []))


@pytest.mark.parametrize("func", [STENCIL, NEST, ACCUMULATE], ids=lambda f: f.name)
def test_one_arrow_per_dependence_pair(func):
    deps = analyses.dependences(func)
    root = parse(plot_dependences(deps).text)
    for kind in ("flow", "anti", "output"):
        assert len(arrows(root, kind)) == pairs(getattr(deps, kind)), kind
    instances = sum(s.domain.count_val().to_python() for s in deps.model.statements)
    assert len(with_class(root, "point")) == instances


def test_the_stencil_has_four_flow_arrows_between_its_two_loops():
    root = parse(plot_dependences(STENCIL).text)  # a PrimFunc is analysed first
    assert len(arrows(root)) == len(arrows(root, "flow")) == 4
    tips = [a.find("{http://www.w3.org/2000/svg}title").text for a in arrows(root)]
    assert tips[0] == "flow: S0(1) -> S1(0)"


def test_the_nest_has_fifteen_flow_arrows():
    root = parse(plot_dependences(NEST).text)
    assert len(arrows(root, "flow")) == 2 * 3 + 3 * 3


def test_kinds_pick_what_is_drawn():
    root = parse(plot_dependences(ACCUMULATE, kinds=("anti",)).text)
    assert arrows(root) == arrows(root, "anti") and len(arrows(root)) == 3
    everything = parse(plot_dependences(ACCUMULATE).text)
    assert [len(arrows(everything, k)) for k in ("flow", "anti", "output")] == [3, 3, 3]


def test_symbolic_extents_need_params():
    f = pp.parse('''
@T.prim_func
def shift(n: T.int32, A: T.Buffer((n,), "float32")):
    for i in T.serial(n - 1):
        A[i + 1] = A[i]
''')
    with pytest.raises(ArgumentValueError, match="params="):
        plot_dependences(f)
    root = parse(plot_dependences(f, params={"n": 6}).text)
    assert len(arrows(root, "flow")) == 4 and len(with_class(root, "point")) == 5


def test_slices_keep_pairs_inside_the_slice():
    f = pp.parse('''
@T.prim_func
def cube(A: T.Buffer((3, 3, 4), "float32")):
    for i, j, k in T.grid(3, 3, 3):
        A[i, j, k + 1] = A[i, j, k]
''')
    # without a slice: one panel per value of the outer loop i, every pair drawn
    whole = parse(plot_dependences(f).text)
    assert [t.text for t in with_class(whole, "caption")][1:] == ["i = 0", "i = 1", "i = 2"]
    assert len(with_class(whole, "point")) == 27 and len(arrows(whole, "flow")) == 18
    root = parse(plot_dependences(f, slice={"i": 1}).text)
    assert len(with_class(root, "point")) == 9 and len(arrows(root, "flow")) == 6


def test_bad_arguments_are_refused():
    with pytest.raises(ArgumentTypeError):
        plot_dependences("f")
    with pytest.raises(ArgumentValueError, match="kinds"):
        plot_dependences(STENCIL, kinds=("true",))


def test_kinds_must_be_a_sequence_of_names():
    with pytest.raises(ArgumentTypeError, match="kinds"):
        plot_dependences(STENCIL, kinds="flow")
