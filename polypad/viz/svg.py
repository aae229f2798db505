"""``Svg``: a picture as SVG text, and the small builder every plot draws with.

Pictures are plain SVG 1.1 elements with inline attributes: no JavaScript and
no external style sheet, so they survive nbconvert's HTML export, static
notebook viewers and GitHub's renderer unchanged.  Every drawn item carries
a ``class`` (``point``, ``cell``, ``padding``, ``arrow flow``, ...) so that
tests, and readers of the text, can count what was drawn.
"""

from __future__ import annotations

from html import escape

# Colours shared by every picture, so that one legend reads the same everywhere.
COLORS = {
    "point": "#1f77b4",
    "cell": "#ffffff",
    "padding": "#d9d9d9",
    "highlight": "#d62728",
    "flow": "#1f77b4",
    "anti": "#ff7f0e",
    "output": "#2ca02c",
    "grid": "#555555",
    "text": "#222222",
}


class Svg:
    """An SVG picture: ``text`` is the whole ``<svg>`` element.

    Jupyter shows it through :meth:`_repr_svg_`; ``str(svg)`` and ``svg.text``
    give the text to write to a file or to put inside HTML.
    """

    __slots__ = ("text", "width", "height")

    def __init__(self, text: str, width: float = 0, height: float = 0):
        self.text = text
        self.width = width
        self.height = height

    def _repr_svg_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<Svg {self.width:g}x{self.height:g}, {len(self.text)} characters>"

    def save(self, path) -> None:
        """Write the picture to ``path`` (a ``.svg`` file)."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.text)


def _num(value: float) -> str:
    """A coordinate with at most two decimals, so the text stays short and stable."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


class Canvas:
    """Collects SVG elements, grows its bounds to fit them, and renders an :class:`Svg`."""

    def __init__(self, margin: float = 8):
        self.items: list[str] = []
        self.margin = margin
        self.max_x = 0.0
        self.max_y = 0.0
        self.markers: set[str] = set()

    def _grow(self, x: float, y: float) -> None:
        self.max_x, self.max_y = max(self.max_x, x), max(self.max_y, y)

    def rect(self, x, y, w, h, *, cls: str, fill: str, title: str | None = None,
             stroke: str = COLORS["grid"], stroke_width: float = 1) -> None:
        """A rectangle; ``title`` becomes a hover tooltip (an SVG ``<title>``)."""
        self._grow(x + w, y + h)
        self.items.append(
            f'<rect class="{cls}" x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" '
            f'height="{_num(h)}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{_num(stroke_width)}">{_title(title)}</rect>')

    def circle(self, x, y, r, *, cls: str, fill: str, title: str | None = None,
               stroke: str = "none") -> None:
        """A filled circle centred on (x, y)."""
        self._grow(x + r, y + r)
        self.items.append(
            f'<circle class="{cls}" cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" '
            f'fill="{fill}" stroke="{stroke}">{_title(title)}</circle>')

    def line(self, x1, y1, x2, y2, *, cls: str, color: str, width: float = 1,
             arrow: bool = False, title: str | None = None, dash: str | None = None) -> None:
        """A segment, with an arrow head at (x2, y2) when ``arrow``."""
        self._grow(max(x1, x2), max(y1, y2))
        head = ""
        if arrow:
            marker = f"pp-head-{color.lstrip('#')}"
            self.markers.add(color)
            head = f' marker-end="url(#{marker})"'
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        self.items.append(
            f'<line class="{cls}" x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" '
            f'y2="{_num(y2)}" stroke="{color}" stroke-width="{_num(width)}"{dashes}{head}>'
            f'{_title(title)}</line>')

    def path(self, d: str, *, cls: str, color: str, arrow: bool = False,
             title: str | None = None) -> None:
        """An unfilled path (``d`` in SVG path syntax); used for self-loops."""
        head = ""
        if arrow:
            self.markers.add(color)
            head = f' marker-end="url(#pp-head-{color.lstrip("#")})"'
        self.items.append(f'<path class="{cls}" d="{d}" fill="none" stroke="{color}"{head}>'
                          f'{_title(title)}</path>')

    def text(self, x, y, content: str, *, size: float = 11, anchor: str = "start",
             cls: str = "label", color: str = COLORS["text"], weight: str = "normal") -> None:
        """A label; its width is estimated (no font metrics) to size the picture."""
        width = 0.6 * size * len(content)
        right = x + (width if anchor == "start" else width / 2 if anchor == "middle" else 0)
        self._grow(right, y + 0.3 * size)
        self.items.append(
            f'<text class="{cls}" x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" '
            f'font-family="monospace" text-anchor="{anchor}" fill="{color}" '
            f'font-weight="{weight}">{escape(content)}</text>')

    def render(self, title: str | None = None) -> Svg:
        """The finished picture, sized to what was drawn plus the margin."""
        width = self.max_x + self.margin
        height = self.max_y + self.margin
        defs = ""
        if self.markers:
            # One arrow head per colour: SVG 1.1 markers cannot take the line's colour.
            heads = "".join(
                f'<marker id="pp-head-{c.lstrip("#")}" viewBox="0 0 10 10" refX="9" '
                f'refY="5" markerWidth="6" markerHeight="6" orient="auto">'
                f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{c}"/></marker>'
                for c in sorted(self.markers))
            defs = f"<defs>{heads}</defs>"
        label = f"<title>{escape(title)}</title>" if title else ""
        text = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
                f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}">'
                f'{label}{defs}{"".join(self.items)}</svg>')
        return Svg(text, width, height)


def _title(title: str | None) -> str:
    return f"<title>{escape(title)}</title>" if title else ""
