"""What the README tests share: the README's sections, its code blocks, and running them."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
TEXT = README.read_text()


def section(title: str) -> str:
    """The README text under ``## title``, up to the next ``## `` heading."""
    start = TEXT.index(f"\n## {title}\n")
    end = TEXT.find("\n## ", start + 1)
    return TEXT[start:end if end != -1 else len(TEXT)]


def blocks(title: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section(title), re.S)


def run(code: str, namespace: dict, name: str) -> str:
    """Execute ``code`` in ``namespace``; return what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md#{name}", "exec"), namespace)
    return out.getvalue()
