"""Hypothesis: isl's padding and inverse agree with brute-force enumeration.

Random quasi-affine maps of rank 1-3 are built from splits with offsets and
transposes over random small shapes.  For each, the padding set from isl
equals the enumerated transformed box minus the enumerated image, and the
inverse maps every image point back to its logical index.
"""

import itertools

import islpy as isl
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from polypad.layout import IndexMap
from polypad.layout.packing import evaluate_index


@st.composite
def layouts(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(rank))
    steps = draw(st.lists(st.one_of(
        st.tuples(st.just("split"), st.integers(0, 2), st.integers(2, 5), st.integers(0, 3)),
        st.tuples(st.just("transpose"), st.permutations(range(4)))), max_size=3))

    def fn(*idx):
        axes = list(idx)
        for step in steps:
            if step[0] == "split":
                _, k, factor, offset = step
                k %= len(axes)
                x = axes[k] + offset if offset else axes[k]
                axes[k:k + 1] = [x // factor, x % factor]
            else:
                order = [p for p in step[1] if p < len(axes)]
                order += [p for p in range(len(axes)) if p not in order]
                axes = [axes[p] for p in order]
        return axes

    names = [f"x{k}" for k in range(rank)]
    return IndexMap(fn, names=names), shape


def _brute_force(m, shape):
    inputs, outputs, _ = m.trace(len(shape))
    image = {}
    for point in itertools.product(*(range(s) for s in shape)):
        env = {v: np.int64(x) for v, x in zip(inputs, point)}
        image[tuple(int(evaluate_index(o, env)) for o in outputs)] = point
    extents = [max(p[k] for p in image) + 1 for k in range(len(outputs))]
    box = set(itertools.product(*(range(e) for e in extents)))
    return image, extents, box - set(image)


def _points(isl_set):
    found = []
    ndim = isl_set.dim(isl.dim_type.set)
    isl_set.foreach_point(lambda p: found.append(tuple(
        p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(ndim))))
    return set(found)


# 500 draws, several times the suite's usual 100-150: each run draws new ones (no fixed
# seed), and 2000 cost 14 s a run for a space of small shapes and short step lists.
@settings(max_examples=500, deadline=None)
@given(layouts())
def test_padding_and_inverse_match_enumeration(layout):
    m, shape = layout
    image, extents, padding = _brute_force(m, shape)
    assert list(m.transformed_shape(shape)) == extents
    assert _points(m.padding_set(shape)) == padding
    inverse, predicate = m.inverse(shape)
    outs, logical_exprs, _ = inverse.trace(len(extents))
    for point, logical in image.items():
        env = {v: np.int64(x) for v, x in zip(outs, point)}
        assert tuple(int(evaluate_index(e, env)) for e in logical_exprs) == logical
        assert not bool(evaluate_index(predicate, env))
    for point in padding:
        env = {v: np.int64(x) for v, x in zip(outs, point)}
        assert bool(evaluate_index(predicate, env))
