"""The HTML pieces every rich display shares: the box's style and tables."""

from __future__ import annotations

from html import escape

#: The style of the box each display draws.
BOX = "font-family:sans-serif;font-size:13px"
_TABLE = "border-collapse:collapse;font-size:12px;margin:4px 0"
_CELL = "border:1px solid #ccc;padding:2px 6px;text-align:left;font-family:monospace"


def html_table(header: tuple[str, ...], rows) -> str:
    """An HTML table, every cell escaped; a header of empty strings is left out."""
    head = "".join(f'<th style="{_CELL}">{escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td style="{_CELL}">{escape(str(c))}</td>' for c in row)
                   + "</tr>" for row in rows)
    head = f"<tr>{head}</tr>" if any(header) else ""
    return f'<table style="{_TABLE}">{head}{body}</table>'
