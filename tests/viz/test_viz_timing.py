"""A kernel's timing: what ``measure`` runs and counts, and how a ``Timing`` shows.

No test compares two timings: only their presence, shape and arithmetic."""

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from viz_support import parse, with_class

import codegen
import polypad as pp
from codegen.timing import Timing, measure
from polypad.errors import ArgumentError, ArgumentTypeError, ArgumentValueError
from polypad.viz import plot_timing
from polypad.viz.timing import seconds_text

# The assumption fails on a second run over the same B: the python target checks it.
BUMP = pp.parse('''
@T.prim_func
def bump(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        T.assume(B[i] == 0.0)
        B[i] = B[i] + A[i]
''')

FIXED = Timing(name="bump", target="numba", runs=(3e-6, 1e-6, 2e-6), compile_s=0.25,
               peer="numpy", peer_runs=(5e-6, 4e-6, 6e-6))


def arrays():
    return np.arange(4, dtype=np.float32), np.zeros(4, dtype=np.float32)


def texts(root: ET.Element) -> str:
    return " | ".join("".join(e.itertext()) for e in root.iter() if e.tag.endswith("text"))


def test_a_timing_counts_every_run_and_the_ratio_is_of_the_medians():
    kernel = codegen.build(BUMP, target="python")
    t = kernel.time(*arrays(), repeat=4, against=lambda a, b: np.add(b, a, out=b),
                    against_name="numpy")
    assert kernel.last_timing is t
    assert (t.name, t.target, t.peer) == ("bump", "python", "numpy")
    assert len(t.runs) == len(t.peer_runs) == 4
    assert all(s > 0 for s in t.runs + t.peer_runs)
    assert t.min <= t.median and t.peer_min <= t.peer_median
    assert t.compile_s is not None and t.compile_s >= 0
    assert t.ratio == pytest.approx(np.median(t.peer_runs) / np.median(t.runs))


def test_every_run_gets_fresh_copies_of_the_written_arrays_only():
    a, b = arrays()
    seen = []

    def peer(a_arg, b_arg):
        seen.append((a_arg is a, b_arg is b, b_arg.copy()))
        b_arg += a_arg

    # a repeated run on the same B would raise AssumptionError
    codegen.build(BUMP, target="python").time(a, b, repeat=3, against=peer)
    assert len(seen) == 1 + 3  # the warm-up, then the counted runs
    assert all(shared_a and not shared_b and not before.any()
               for shared_a, shared_b, before in seen)
    assert not b.any(), "the caller's arrays are never written"


def _at_offset(values: np.ndarray, offset: int) -> np.ndarray:
    raw = np.zeros(values.nbytes + 128, np.uint8)
    start = (offset - raw.ctypes.data) % 64
    out = raw[start:start + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


@pytest.mark.parametrize("offset", [0, 16, 60])
def test_the_copies_start_where_the_originals_do_from_a_cache_line(offset):
    # np.copy puts a large array 16 bytes past a page whatever the original, so a
    # benchmark on 64-byte-aligned arrays timed unaligned copies of them
    a, b = arrays()
    b = _at_offset(b, offset)
    seen = []

    def peer(a_arg, b_arg):
        seen.append(b_arg.ctypes.data % 64)

    measure(codegen.build(BUMP, target="python"), a, b, repeat=2, against=peer)
    assert seen == [offset] * 3
    big = _at_offset(np.arange(4096, dtype=np.float32).reshape(64, 64), offset)
    copy = codegen.timing.copy_in_place(big)
    assert copy.ctypes.data % 64 == offset and not np.shares_memory(copy, big)
    np.testing.assert_array_equal(copy, big)
    assert (copy.dtype, copy.shape) == (big.dtype, big.shape)


def test_an_array_not_in_c_order_is_copied_as_np_copy_copies_it():
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    copy = codegen.timing.copy_in_place(strided)
    np.testing.assert_array_equal(copy, strided)
    assert not np.shares_memory(copy, strided)


def test_a_kernel_compiled_before_reports_no_compile_time_and_no_peer():
    kernel = codegen.build(BUMP, target="python").compile()
    t = measure(kernel, *arrays(), repeat=2)
    assert t.compile_s is None and t.peer is None and t.peer_runs is None
    assert t.ratio is None and t.peer_median is None
    assert str(t).startswith("bump (python): median ") and "compile" not in str(t)


def test_a_lambda_peer_is_called_peer():
    t = codegen.build(BUMP, target="python").time(*arrays(), repeat=1,
                                                  against=lambda a, b: None)
    assert t.peer == "peer" and "peer median" in t._repr_html_()


def test_the_arguments_and_options_are_checked_before_anything_runs():
    kernel = codegen.build(BUMP, target="python")
    calls = []
    with pytest.raises(ArgumentError, match="'B' must have dtype float32"):
        kernel.time(np.zeros(4, np.float32), np.zeros(4, np.int32), against=calls.append)
    with pytest.raises(ArgumentValueError, match="repeat must be at least 1, not 0"):
        kernel.time(*arrays(), repeat=0)
    with pytest.raises(ArgumentTypeError, match="parameter repeat takes an int"):
        kernel.time(*arrays(), repeat=2.5)
    with pytest.raises(ArgumentValueError, match="against must be a callable or None"):
        kernel.time(*arrays(), against="np.add")
    with pytest.raises(ArgumentTypeError, match="parameter kernel takes a Kernel"):
        measure(BUMP, *arrays())
    assert not calls and not kernel.compiled and kernel.last_timing is None


def test_the_fixed_timing_numbers():
    assert FIXED.median == 2e-6 and FIXED.min == 1e-6
    assert FIXED.peer_median == 5e-6 and FIXED.peer_min == 4e-6
    assert FIXED.ratio == pytest.approx(2.5)
    assert str(FIXED) == ("bump (numba): median 2 µs, min 1 µs over 3 runs; compile 250 ms; "
                          "numpy: median 5 µs (ratio 2.5)")


@pytest.mark.parametrize("seconds, text", [(2.5, "2.5 s"), (0.0123, "12.3 ms"),
                                           (4.56e-6, "4.56 µs"), (7e-8, "70 ns")])
def test_seconds_are_written_in_a_readable_unit(seconds, text):
    assert seconds_text(seconds) == text


def test_the_bar_chart_draws_both_medians_and_every_run():
    root = parse(FIXED._repr_svg_())
    kernel_bar, = with_class(root, "bar", "kernel")
    peer_bar, = with_class(root, "bar", "peer")
    # one scale from zero: the bars' lengths are in the ratio of the medians
    assert float(peer_bar.get("width")) / float(kernel_bar.get("width")) == \
        pytest.approx(2.5, rel=0.01)
    assert len(with_class(root, "run", "kernel")) == len(with_class(root, "run", "peer")) == 3
    words = texts(root)
    for expected in ("bump (numba)", "numpy", "2 µs", "5 µs", "6 µs", "ratio numpy / kernel = 2.5",
                     "compile 250 ms"):
        assert expected in words, expected
    assert plot_timing(FIXED).text == FIXED._repr_svg_()


def test_without_a_peer_the_chart_has_one_bar_and_no_ratio():
    t = Timing(name="f<g>", target="python", runs=(1e-3,))
    root = parse(t._repr_svg_())
    assert len(with_class(root, "bar")) == 1 and "ratio" not in texts(root)
    assert "f<g> (python)" in texts(root)  # escaped in the text, whole once parsed


def test_the_html_is_well_formed_and_holds_the_numbers():
    html = FIXED._repr_html_()
    root = ET.fromstring(html)
    cells = ["".join(td.itertext()) for td in root.iter("td")]
    for expected in ("bump (numba)", "3", "2 µs", "1 µs", "250 ms", "5 µs", "4 µs"):
        assert expected in cells, expected
    assert "2.5 (numpy median / kernel median)" in cells
    assert html.count("<svg") == 1


def test_a_kernel_shows_its_last_timing():
    kernel = codegen.build(BUMP, target="python")
    assert "last timing" not in kernel._repr_html_()
    t = kernel.time(*arrays(), repeat=2, against=lambda a, b: None, against_name="noop")
    html = kernel._repr_html_()
    root = ET.fromstring(html)
    assert "last timing" in html and "noop median" in html
    assert seconds_text(t.median) in "".join(root.itertext())
    assert len([e for e in root.iter() if e.tag.endswith("svg")]) == 1


@pytest.mark.numba
def test_a_numba_kernel_is_timed_with_its_compile_apart():
    kernel = codegen.build(pp.parse('''
@T.prim_func
def twice(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        A[i] = A[i] * 2.0
'''))
    a = np.ones(8, dtype=np.float32)
    t = kernel.time(a, repeat=3, against=lambda a: np.multiply(a, 2, out=a))
    assert t.target == "numba" and kernel.compiled
    assert t.compile_s is not None and t.compile_s > 0
    assert all(s > 0 for s in t.runs) and math.isfinite(t.ratio)
    assert (a == 1).all()


def test_a_run_far_slower_than_the_medians_is_pinned_to_the_axis_end():
    t = Timing(name="f", target="numba", runs=(1e-6, 1e-6, 1e-6, 1e-3))
    root = parse(t._repr_svg_())
    slow, = with_class(root, "run", "beyond")
    assert len(with_class(root, "run")) == 4
    assert "1 ms" in "".join(slow.itertext())
    assert "1 slower run (red, up to 1 ms) drawn at the axis end" in texts(root)
    assert "3 µs" in texts(root)  # the axis ends at three medians
    assert "beyond" not in FIXED._repr_svg_()
