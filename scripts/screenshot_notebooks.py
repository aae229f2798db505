"""Export the notebooks to HTML with nbconvert and screenshot them in headless Chromium.

    .venv/bin/python scripts/screenshot_notebooks.py [--out docs/screenshots] [NAME.ipynb ...]

This checks the look the issue asks for: the stored outputs (inline SVG, no
JavaScript) as a reader of the HTML export sees them.  Needs ``nbconvert``
(``pip install ".[notebook]"``) and Chromium (the Debian package ``chromium``).
Nothing is executed: the notebooks' stored outputs are exported as they are.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 1100
HEIGHT = 3000  # Chromium's --screenshot captures the window, not the whole page


def export(notebook: Path, folder: Path) -> Path:
    """The notebook as one self-contained HTML file in ``folder``."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(
        nbformat.read(notebook, as_version=4))
    # Without the template's scripts (MathJax, require.js), as a static viewer shows it:
    # the pictures must not need them.
    body = re.sub(r"<script\b.*?</script>", "", body, flags=re.S | re.I)
    out = folder / f"{notebook.stem}.html"
    out.write_text(body, encoding="utf-8")
    return out


def screenshot(browser: str, page: Path, png: Path) -> None:
    """Chromium's headless screenshot of ``page`` (the top ``HEIGHT`` pixels)."""
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars",
                    f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={png}",
                    page.as_uri()], check=True, capture_output=True, timeout=120)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 2
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for notebook in notebooks:
            png = args.out / f"{notebook.stem}.png"
            screenshot(browser, export(notebook, Path(tmp)), png)
            print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
