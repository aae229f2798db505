"""The HTML pieces every rich display shares: the colours, the box's style and tables.

Notebook front ends differ in theme, light or dark, and an output cannot
know which.  So every element here that sets a background also sets its
text colour, and each colour follows the notebook's theme through
JupyterLab's CSS variables (which JupyterLab, Notebook 7 and nbconvert's
``lab`` template define, dark themes included) with a light fallback where
the front end defines none: either way text and background come from the
same theme, never dark text on a dark page.  Styles are inline, because
front ends and nbconvert may drop ``<style>`` elements from outputs.
"""

from __future__ import annotations

from html import escape

#: Text and background colours, from the notebook's theme or light fallbacks.
FG = "var(--jp-content-font-color1, #1f2328)"
MUTED = "var(--jp-content-font-color2, #57606a)"
BG = "var(--jp-layout-color0, #ffffff)"
HEAD_BG = "var(--jp-layout-color2, #eaeef2)"
BORDER = "var(--jp-border-color1, #c8ccd0)"

#: The style of the box each display draws: its own text and background colours.
BOX = (f"font-family:var(--jp-ui-font-family, sans-serif);font-size:13px;color:{FG};"
       f"background:{BG};padding:4px 6px;border-radius:4px")
_TABLE = f"border-collapse:collapse;font-size:12px;margin:4px 0;color:{FG};background:{BG}"
_CELL = (f"border:1px solid {BORDER};padding:2px 6px;text-align:left;"
         f"font-family:var(--jp-code-font-family, monospace);color:{FG};background:{BG}")
_HEAD = _CELL.replace(f"background:{BG}", f"background:{HEAD_BG}") + ";font-weight:bold"


def html_table(header: tuple[str, ...], rows) -> str:
    """An HTML table, every cell escaped; a header of empty strings is left out."""
    head = "".join(f'<th style="{_HEAD}">{escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td style="{_CELL}">{escape(str(c))}</td>' for c in row)
                   + "</tr>" for row in rows)
    head = f"<tr>{head}</tr>" if any(header) else ""
    return f'<table style="{_TABLE}">{head}{body}</table>'


def shape_text(shape) -> str:
    """A buffer shape as it reads in the script: ``[14]``, ``[4, 4]``, ``[n, 4]``."""
    from polypad.ir.show import show

    return "[" + ", ".join(str(e) if isinstance(e, int) else show(e) for e in shape) + "]"
