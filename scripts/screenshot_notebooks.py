"""Export the notebooks to HTML with nbconvert and screenshot them in headless Chromium,
once in a light theme and once in a dark one.

    .venv/bin/python scripts/screenshot_notebooks.py [--out docs/screenshots] [NAME.ipynb ...]

This checks the look the issue asks for: the stored outputs (inline SVG, no
JavaScript) as a reader of the HTML export sees them, in nbconvert's light
and dark JupyterLab themes (``NAME-light.png``, ``NAME-dark.png``).  Needs
``nbconvert`` (``pip install ".[notebook]"``) and Chromium (the Debian package
``chromium``).  Nothing is executed: the notebooks' stored outputs are
exported as they are.
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
MAX_HEIGHT = 16000  # Chromium's --screenshot captures the window: it is sized to the page
THEMES = ("light", "dark")
# A fresh profile, and nothing that reaches the network or a GPU.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")


def export(notebook: Path, folder: Path, theme: str) -> Path:
    """The notebook as one self-contained HTML file in ``folder``, in ``theme``."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab", theme=theme).from_notebook_node(
        nbformat.read(notebook, as_version=4))
    # Without the template's scripts (MathJax, require.js), as a static viewer shows it:
    # the pictures must not need them.
    body = re.sub(r"<script\b.*?</script>", "", body, flags=re.S | re.I)
    out = folder / f"{notebook.stem}-{theme}.html"
    out.write_text(body, encoding="utf-8")
    return out


def _chromium(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *args],
                          check=True, capture_output=True, text=True, timeout=180)


def page_height(browser: str, page: Path, profile: Path) -> int:
    """The rendered height of ``page`` at ``WIDTH`` pixels: a copy with one script
    that writes it into the DOM, which Chromium then dumps."""
    probe = page.with_name(page.stem + "-probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace(
        "</body>", "<script>document.body.setAttribute('data-height', "
        "document.documentElement.scrollHeight)</script></body>"), encoding="utf-8")
    dom = _chromium(browser, profile, f"--window-size={WIDTH},1000", "--dump-dom",
                    probe.as_uri()).stdout
    found = re.search(r'data-height="(\d+)"', dom)
    return min(MAX_HEIGHT, int(found.group(1)) + 20) if found else 3000


def screenshot(browser: str, page: Path, png: Path, profile: Path) -> None:
    """Chromium's headless screenshot of the whole of ``page`` (up to ``MAX_HEIGHT``)."""
    height = page_height(browser, page, profile)
    _chromium(browser, profile, f"--window-size={WIDTH},{height}", f"--screenshot={png}",
              page.as_uri())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--theme", choices=THEMES, action="append",
                        help="only this theme (may be repeated; default: both)")
    args = parser.parse_args(argv)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 2
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for notebook in notebooks:
            for theme in args.theme or THEMES:
                png = args.out / f"{notebook.stem}-{theme}.png"
                page = export(notebook, Path(tmp), theme)
                screenshot(browser, page, png, Path(tmp) / "profile")
                print(png.relative_to(ROOT) if png.is_relative_to(ROOT) else png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
