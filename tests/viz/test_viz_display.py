"""Rich display: each object's ``_repr_html_`` holds its text, escaped, and pictures."""

import subprocess
import sys
import xml.etree.ElementTree as ET

import analyses
import polypad as pp
from polypad.viz import highlight

FILL = pp.parse('''
@T.prim_func
def fill(A: T.Buffer((14,), "int32")):
    with T.block("compute"):
        for i in T.serial(14):
            if i < 20:
                A[i] = i
''')


def test_prim_func_shows_its_script_highlighted_and_escaped():
    html = FILL._repr_html_()
    assert "<code>fill</code>" in html
    assert "i &lt; <span" in html and "i < " not in html
    assert ('<span style="color:var(--jp-mirror-editor-keyword-color, #0000c0);'
            'font-weight:bold">for</span>') in html
    assert "&quot;compute&quot;" in html


def test_highlighting_keeps_the_text_and_is_well_formed():
    text = pp.script(FILL)
    html = highlight(text)
    root = ET.fromstring(html)  # the spans nest properly
    assert "".join(root.itertext()) == text


def test_highlighting_falls_back_to_plain_text():
    assert highlight('x = "unterminated\n') == \
        f'<pre style="{highlight("").split(chr(34))[1]}">x = &quot;unterminated\n</pre>'


def test_schedule_shows_the_function_and_the_trace_table():
    sch = pp.Schedule(FILL)
    assert "no primitive applied yet" in sch._repr_html_()
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0)
    html = sch._repr_html_()
    assert html.count("<tr>") == 1 + len(sch.trace)
    assert "transform_layout" in html and "lambda i: [i // 4, i % 4]" in html
    assert "A_padding" in html  # the scheduled function, not the original


def test_domain_touched_shows_the_set_and_the_buffer_grid():
    touched = analyses.domain_touched(FILL, "A", "write")
    html = touched._repr_html_()
    assert "domain touched" in html and "A[i] for" in html
    svg = html[html.index("<svg"):html.index("</svg>") + 6]
    root = ET.fromstring(svg)
    rects = [e for e in root.iter() if (e.get("class") or "").startswith("cell")]
    assert len(rects) == 14
    assert sum("touched" in e.get("class") for e in rects) == 14


def test_a_symbolic_touched_set_says_why_it_has_no_picture():
    f = pp.parse('''
@T.prim_func
def fill_n(n: T.int32, A: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        A[i] = 0.0
''')
    html = analyses.domain_touched(f, "A")._repr_html_()
    assert "<svg" not in html and "(no picture:" in html and "params=" in html


def test_a_layout_on_a_shape_shows_the_padding_and_the_grids():
    relation = pp.IndexMap(lambda i: [i // 4, i % 4]).relation((14,))
    html = relation._repr_html_()
    assert "i0 == 3 and i1 &gt;= 2" in html and "[4, 4]" in html
    assert html.count('class="cell padding"') == 2


def test_dependences_show_the_relations_and_the_arrows():
    deps = analyses.dependences(pp.parse('''
@T.prim_func
def stencil(A: T.Buffer((6,), "float32"), B: T.Buffer((5,), "float32")):
    for i in T.serial(5):
        A[i] = 1.0
    for j in T.serial(5):
        B[j] = A[j + 1]
'''))
    html = deps._repr_html_()
    assert "S0[i] -&gt; S1[j = -1 + i]" in html
    assert html.count('class="arrow flow"') == 4


def test_importing_the_library_does_not_import_the_pictures():
    code = ("import sys, polypad, analyses, codegen\n"
            "from analyses import dataflow, touched\n"
            "assert 'polypad.viz' not in sys.modules, 'imported at import time'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_the_model_shows_a_table_of_statements_and_their_instances():
    from polypad.model import extract

    html = extract(FILL)._repr_html_()
    assert html.count("<tr>") == 2 and "S0[i] -&gt; A[i]" in html
    svg = html[html.index("<svg"):html.index("</svg>") + 6]
    points = [e for e in ET.fromstring(svg).iter() if e.get("class") == "point"]
    assert len(points) == 14


def test_a_kernel_shows_its_source_without_compiling():
    import codegen

    kernel = codegen.build(FILL, target="python")
    html = kernel._repr_html_()
    assert "<code>fill</code>" in html and "for python" in html and "i &lt; <span" in html
    assert not kernel.compiled


def test_every_display_is_well_formed_markup():
    from polypad.model import extract

    sch = pp.Schedule(FILL)
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=0)
    shown = [FILL, sch, extract(FILL), analyses.dependences(FILL),
             analyses.domain_touched(FILL, "A"),
             pp.IndexMap(lambda i: [i // 4, i % 4]).relation((14,)),
             analyses.can_merge_loops(pp.parse('''
@T.prim_func
def stencil(A: T.Buffer((6,), "float32"), B: T.Buffer((5,), "float32")):
    for i in T.serial(5):
        A[i] = 1.0
    for j in T.serial(5):
        B[j] = A[j + 1]
'''), "i", "j")]
    for obj in shown:
        ET.fromstring(obj._repr_html_())  # raises on unbalanced or unescaped markup
