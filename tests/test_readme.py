"""The README's quickstart runs as written and does what its comments say."""

import re
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def test_quickstart_runs():
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md#quickstart", "exec"), namespace)
    np = namespace["np"]
    expected = np.where(np.arange(14) % 4 < 2, 2.0 * np.arange(14), 0.0)
    np.testing.assert_array_equal(namespace["b"], expected.astype(np.float32))
    assert namespace["m"].transformed_shape((14,)) == (4, 4)
    assert namespace["pp"].script(namespace["m"].padding_predicate((14,))) == "i0 == 3 and i1 >= 2"
    assert namespace["packed"].shape == (4, 4) and namespace["packed"][3, 3] == 0.0


def test_readme_commands_match_ci():
    ci = (README.parent / ".ci" / "run").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", README.read_text(), re.S)
    assert blocks[0] in ci and blocks[1] in ci


def test_schedules_and_analyses_section_runs():
    text = README.read_text()
    code = re.search(r"## Schedules and analyses\n\n```python\n(.*?)```", text, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "README.md#schedules", "exec"), namespace)
    pp, analyses = namespace["pp"], namespace["analyses"]
    expected = pp.parse('''
@T.prim_func
def fill(A: T.Buffer((4, 4), "int32")):
    with T.block("compute"):
        for io in T.serial(4):
            for ii in T.serial(4):
                if 4 * io + ii < 14:
                    A[io, ii] = 4 * io + ii
    for io in T.serial(4):
        for ii in T.serial(4):
            with T.block("A_padding"):
                if 4 * io + ii >= 14:
                    A[io, ii] = 0
''')
    pp.assert_structural_equal(namespace["sch"].func, expected)
    replayed = namespace["sch"].trace.apply_to(namespace["f"])
    pp.assert_structural_equal(replayed.func, expected)
    touched = analyses.domain_touched(namespace["stencil"], "A", "read")
    assert str(touched) == "A[i] for 1 <= i < 16"
    decision = namespace["decision"]
    assert isinstance(decision, analyses.Refuted)
    assert str(decision.counterexample.element) == "A[1]"
    assert [str(i) for i in decision.counterexample.instances] == ["S0(i=1)", "S1(j=0)"]
