"""Script text as HTML with syntax colours, for notebooks.

The printed script is Python syntax, so Python's own :mod:`tokenize` splits
it; each token is escaped and wrapped in a ``<span>`` with an inline colour
(inline, not a style sheet, because notebook front ends and nbconvert may
drop ``<style>`` elements from outputs).  The colours are the notebook theme's
own (JupyterLab's CSS variables) with light fallbacks, and the block sets its
text colour together with its background, so that it reads in any theme.
"""

from __future__ import annotations

import io
import keyword
import token
import tokenize
from html import escape

# Each token kind in the notebook theme's own editor colour, or a light fallback.
_STYLE = {
    "keyword": "color:var(--jp-mirror-editor-keyword-color, #0000c0);font-weight:bold",
    "builtin": "color:var(--jp-mirror-editor-builtin-color, #7a3e9d)",
    "T": "color:var(--jp-mirror-editor-variable-2-color, #008080)",
    "string": "color:var(--jp-mirror-editor-string-color, #a31515)",
    "number": "color:var(--jp-mirror-editor-number-color, #098658)",
    "comment": "color:var(--jp-mirror-editor-comment-color, #6a737d);font-style:italic",
    "decorator": "color:var(--jp-mirror-editor-meta-color, #795e26)",
}
# The block sets its text colour with its background: identifiers and punctuation,
# which carry no colour of their own, must not take a dark theme's page colour.
PRE_STYLE = ("font-family:var(--jp-code-font-family, monospace);font-size:12px;"
             "line-height:1.35;color:var(--jp-content-font-color1, #1f2328);"
             "background:var(--jp-cell-editor-background, #f6f8fa);"
             "border:1px solid var(--jp-border-color2, #e1e4e8);"
             "padding:6px 8px;border-radius:3px;overflow-x:auto;white-space:pre")


def _kind(tok: tokenize.TokenInfo, previous: str) -> str | None:
    if tok.type == token.NAME:
        if keyword.iskeyword(tok.string):
            return "keyword"
        if tok.string == "T" or previous == "T.":
            return "T"
        if tok.string in ("range", "min", "max", "float", "int", "bool"):
            return "builtin"
        return None
    if tok.type == token.STRING:
        return "string"
    if tok.type == token.NUMBER:
        return "number"
    if tok.type == token.COMMENT:
        return "comment"
    return None


def highlight(text: str) -> str:
    """``text`` (script syntax) as a ``<pre>`` element with coloured, escaped tokens.

    Text that does not tokenize is shown escaped and uncoloured.
    """
    lines = text.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return f'<pre style="{PRE_STYLE}">{escape(text)}</pre>'
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    out, pos, previous = [], 0, ""
    for tok in tokens:
        if tok.type in (token.ENDMARKER, token.DEDENT) or tok.start[0] > len(lines):
            continue
        start = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[tok.end[0] - 1] + tok.end[1]
        if start < pos:
            continue
        out.append(escape(text[pos:start]))
        piece = text[start:end]
        kind = _kind(tok, previous)
        if kind is None and tok.type == token.OP and tok.string == "@":
            kind = "decorator"
        out.append(f'<span style="{_STYLE[kind]}">{escape(piece)}</span>' if kind
                   else escape(piece))
        previous = "T." if (previous == "T" and piece == ".") else piece
        pos = end
    out.append(escape(text[pos:]))
    return f'<pre style="{PRE_STYLE}">{"".join(out)}</pre>'
