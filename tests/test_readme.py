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
