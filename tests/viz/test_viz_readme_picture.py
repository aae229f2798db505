"""The README's pictures section runs, and its picture is what plot_layout draws today."""

import re
from pathlib import Path

from viz_support import parse, with_class

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_readme_block_runs_and_the_stored_picture_is_current(tmp_path, monkeypatch):
    text = (ROOT / "README.md").read_text()
    section = text.split("## Pictures in Jupyter", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(tmp_path)  # the block saves padding.svg in the current folder
    namespace: dict = {}
    exec(compile(code, "README pictures", "exec"), namespace)
    saved = (tmp_path / "padding.svg").read_text()
    assert saved == namespace["picture"].text
    # docs/padding.svg, shown by the README, is that picture: regenerate it when this fails
    assert (ROOT / "docs" / "padding.svg").read_text() == saved
    assert len(with_class(parse(saved), "cell", "padding")) == 2
    assert "](docs/padding.svg)" in section


def test_the_readme_example_set_has_twelve_points():
    from polypad import viz

    svg = viz.plot_set("[n] -> { [i, j] : 0 <= i < 3 and 0 <= j < n }", params={"n": 4})
    assert len(with_class(parse(svg.text), "point")) == 12
