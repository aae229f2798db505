"""Plain-text reprs say what each object with a rich display is."""

import re
import sys

import pytest

import analyses
import polypad as pp
from polypad import viz
from polypad.model import extract

STENCIL = pp.parse('''
@T.prim_func
def stencil(A: T.Buffer((6,), "float32"), B: T.Buffer((5,), "float32")):
    for i in T.serial(5):
        A[i] = 1.0
    for j in T.serial(5):
        B[j] = A[j + 1]
''')


def no_address(text: str) -> bool:
    return re.search(r"at 0x[0-9a-f]+", text) is None


def test_dependences_name_their_function_and_relations():
    text = repr(analyses.dependences(STENCIL))
    assert text == ("Dependences(stencil: flow { S0[i] -> S1[j = -1 + i] : 0 < i <= 4 }; "
                    "anti {  }; output {  })")


def test_a_layout_relation_names_its_map_shapes_and_padding():
    text = repr(pp.IndexMap(lambda i: [i // 4, i % 4]).relation((14,)))
    assert text == ("LayoutRelation(IndexMap(lambda i: [i // 4, i % 4]) on [14] -> [4, 4], "
                    "padding where i0 == 3 and i1 >= 2)")


def test_a_model_names_its_function_and_statements():
    assert repr(extract(STENCIL)) == \
        "Model(stencil: 2 statements: { S0[i] : 0 <= i <= 4 }; { S1[j] : 0 <= j <= 4 })"


def test_a_picture_says_what_it_shows_and_its_size():
    text = repr(viz.plot_set("{ [i] : 0 <= i < 3 }"))
    assert re.fullmatch(r"<Svg picture of \{ \[i\] : 0 <= i <= 2 \}, [\d.]+ x [\d.]+ px>",
                        text), text


def test_interact_sliders_say_what_they_slide(monkeypatch):
    pytest.importorskip("ipywidgets")
    shown = viz.interact_set("[n] -> { [i] : 0 <= i < n }", params={"n": range(1, 5)})
    assert repr(shown) == "<interact_set sliders over [n] -> { [i] : 0 <= i < n } at n = 1>"
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    assert repr(viz.interact_set("{ [i] : 0 <= i < 2 }")).startswith("<Svg picture of")


def test_every_object_with_a_rich_display_has_a_repr_without_an_address():
    import codegen

    kernel = codegen.build(STENCIL, target="python")
    shown = [STENCIL, pp.Schedule(STENCIL), extract(STENCIL), analyses.dependences(STENCIL),
             analyses.domain_touched(STENCIL, "A"), analyses.can_merge_loops(STENCIL, "i", "j"),
             analyses.can_merge_loops(STENCIL, "i", "j").counterexample,
             pp.IndexMap(lambda i: [i // 4, i % 4]).relation((14,)), kernel]
    for obj in shown:
        assert hasattr(obj, "_repr_html_")
        assert no_address(repr(obj)), repr(obj)
