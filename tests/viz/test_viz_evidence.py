"""Counterexamples and decisions: the element on its buffer, and rich display."""

import pytest
from viz_support import parse, with_class

import analyses
import polypad as pp
from analyses import Counterexample, Element, Instance, Proved, Refuted, Unknown
from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.viz import plot_counterexample

CONV1D_RFC_TEXT = '''
@T.prim_func
def conv1d(A: T.Buffer((4, 4), "float32"), F: T.Buffer((3,), "float32"),
           B: T.Buffer((4, 4), "float32")):
    with T.block("compute"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii < 14:
                B[io, ii] = 0.0
                for f in T.serial(3):
                    B[io, ii] = B[io, ii] + F[f] * A[io + (ii + f) // 4, (ii + f) % 4]
    with T.block("B_pad_value"):
        for io, ii in T.grid(4, 4):
            if 4 * io + ii >= 14:
                B[io, ii] = 0.0
'''
CONV1D_RFC = pp.parse(CONV1D_RFC_TEXT)


@pytest.fixture(scope="module")
def refuted():
    decision = analyses.can_remove_conditional(CONV1D_RFC, "compute")
    assert isinstance(decision, Refuted)
    return decision


def test_an_out_of_bounds_element_is_drawn_beyond_the_buffer(refuted):
    cex = refuted.counterexample
    assert str(cex.element) == "A[4, 0]"
    root = parse(plot_counterexample(cex, func=CONV1D_RFC).text)
    assert len(with_class(root, "cell")) == 5 * 4  # the 4 x 4 buffer and the row it misses
    assert len(with_class(root, "cell", "outside")) == 4
    [hit] = with_class(root, "highlight")
    assert hit.find("{http://www.w3.org/2000/svg}title").text.startswith("A[4, 0]")
    labels = [t.text for t in with_class(root, "instance-label")]
    assert labels == [str(i) for i in cex.instances]


def test_without_the_function_the_grid_just_holds_the_element():
    cex = Counterexample("x", (Instance("S0", {"i": 3}),), Element("B", (3,)))
    root = parse(plot_counterexample(cex).text)
    assert len(with_class(root, "cell")) == 5 and len(with_class(root, "highlight")) == 1
    assert any("func=" in (t.text or "") for t in with_class(root, "note"))
    sized = parse(plot_counterexample(cex, shape=(8,)).text)
    assert len(with_class(sized, "cell")) == 8 and not with_class(sized, "outside")


def test_what_cannot_be_drawn_is_refused():
    with pytest.raises(ArgumentValueError, match="no buffer element"):
        plot_counterexample(Counterexample("no element"))
    with pytest.raises(ArgumentValueError, match="no axis"):
        plot_counterexample(Counterexample("0-d", (), Element("C", ())))
    with pytest.raises(ArgumentTypeError):
        plot_counterexample("refuted")


def test_refuted_html_has_the_reason_the_table_and_the_picture(refuted):
    html = refuted._repr_html_()
    assert "refuted" in html and "outside the shape (4, 4) of A" in html
    assert "compute(io=3, ii=2, f=2)" in html and "A[4, 0]" in html
    assert html.count("<svg") == 1


def test_decisions_escape_their_text():
    unknown = Unknown("cannot decide a < b & <script>")
    html = unknown._repr_html_()
    assert "a &lt; b &amp; &lt;script&gt;" in html and "<script>" not in html
    proved = Proved("isl", "i <= 3")._repr_html_()
    assert "proved" in proved and "i &lt;= 3" in proved
    cex = Counterexample("<b>", (Instance("S<0>", {"i": 1}),), Element("T<x>", (1, 2, 3)))
    html = Refuted(cex)._repr_html_()
    assert "<b>" not in html and "S&lt;0&gt;(i=1)" in html and "T&lt;x&gt;[1, :, :]" in html


def test_a_subclass_of_proved_shows_as_proved():
    # with a fifth row of A, computing B's padding stays in bounds (README's conv1d)
    f = pp.parse(CONV1D_RFC_TEXT.replace('A: T.Buffer((4, 4)', 'A: T.Buffer((5, 4)'))
    decision = analyses.can_remove_conditional(f, "compute")
    assert type(decision) is not Proved and isinstance(decision, Proved)
    html = decision._repr_html_()
    assert ">proved</span>" in html and "overwritten" in html


STENCIL = pp.parse('''
@T.prim_func
def stencil(A: T.Buffer((16,), "float32"), B: T.Buffer((15,), "float32")):
    for i in T.serial(15):
        A[i] = 1.0
    for j in T.serial(15):
        B[j] = A[j + 1]
''')


def test_a_refusal_draws_its_element_on_the_real_buffer_without_func(refuted):
    # the decider attached the function: A is 4 x 4, and A[4, 0] lies one row beyond
    assert refuted.counterexample.func is CONV1D_RFC
    root = parse(plot_counterexample(refuted.counterexample).text)
    assert len(with_class(root, "cell")) == 5 * 4
    assert len(with_class(root, "cell", "outside")) == 4
    assert [t.text for t in with_class(root, "caption")][0] == "A[4, 0] in A[4, 4]"
    assert not with_class(root, "note")  # no "pass func=" note: the shape is known
    html = refuted._repr_html_()
    assert html.count(' outside"') == 4 and "in function" in html


def test_a_merge_refusal_draws_the_element_on_its_16_element_buffer():
    decision = analyses.can_merge_loops(STENCIL, "i", "j")
    cex = decision.counterexample
    assert str(cex.element) == "A[1]" and cex.func is STENCIL
    root = parse(plot_counterexample(cex).text)
    assert len(with_class(root, "cell")) == 16 and not with_class(root, "outside")
    [hit] = with_class(root, "highlight")
    assert hit.find("{http://www.w3.org/2000/svg}title").text.startswith("A[1]")


def test_a_merge_refusal_shows_its_two_instances_on_the_dependence_picture():
    html = analyses.can_merge_loops(STENCIL, "i", "j")._repr_html_()
    svg = html[html.index("<svg"):html.index("</svg>") + 6]
    root = parse(svg)
    rings = [r.find("{http://www.w3.org/2000/svg}title").text for r in with_class(root, "focus")]
    assert rings == ["S0(i=1)", "S1(j=0)"]
    [clash] = with_class(root, "clash")
    assert clash.find("{http://www.w3.org/2000/svg}title").text == \
        "S0(i=1) and S1(j=0) meet at A[1]"
    assert [t.text for t in with_class(root, "clash-label")] == ["A[1]"]
    assert len(with_class(root, "arrow", "flow")) == 14


def test_a_schedule_refusal_carries_the_function_to_its_picture():
    sch = pp.Schedule(STENCIL)
    with pytest.raises(pp.IllegalTransformError) as info:
        sch.merge_adjacent_loops("i", "j")
    cex = info.value.evidence
    assert cex.func is STENCIL
    assert 'class="clash"' in cex._repr_html_()


def test_the_function_takes_no_part_in_equality_or_repr(refuted):
    cex = refuted.counterexample
    bare = Counterexample(cex.description, cex.instances, cex.element, cex.params, cex.values)
    assert bare == cex and "func" not in repr(cex)
    assert bare.func is None
