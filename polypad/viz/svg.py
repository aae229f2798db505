"""``Svg``: a picture as SVG text, and the small builder every plot draws with.

Pictures are plain SVG 1.1 elements with inline attributes: no JavaScript and
no external style sheet, so they survive nbconvert's HTML export, static
notebook viewers and GitHub's renderer unchanged.  Every drawn item carries
a ``class`` (``point``, ``cell``, ``padding``, ``arrow flow``, ...) so that
tests, and readers of the text, can count what was drawn.

Every picture paints its own light background (a ``rect`` of class
``background``) and gives every text its colour: a notebook's theme may be
dark, and an SVG shown as an image cannot read the page's colours, so a
picture that relied on either would lose its labels there.  Labels carry a
halo of the background colour and are drawn after the shapes and arrows,
so an arrow that crosses a label never hides it.  The picture is drawn at
its natural size and, where that is larger than ``MAX_WIDTH`` by
``MAX_HEIGHT``, its ``width``/``height`` are scaled down to fit while the
``viewBox`` keeps every coordinate (the plots summarise large inputs, so
this is a safety net rather than the rule).
"""

from __future__ import annotations

from html import escape

# Colours shared by every picture, so that one legend reads the same everywhere.
COLORS = {
    "background": "#ffffff",
    "frame": "#d0d7de",
    "point": "#1f77b4",
    "cell": "#ffffff",
    "padding": "#c8c8c8",
    "highlight": "#d62728",
    "flow": "#1f77b4",
    "anti": "#ff7f0e",
    "output": "#2ca02c",
    "grid": "#555555",
    "lattice": "#b0b0b0",
    "outside": "#f2f2f2",
    "text": "#1f2328",
    "muted": "#57606a",
}

MAX_WIDTH = 900.0  # the largest width/height a picture is shown at, in pixels
MAX_HEIGHT = 1200.0
FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
TICK = 11  # font sizes: tick numbers and axis names
LABEL = 12  # labels, legends, notes
CAPTION = 13  # panel captions


class Svg:
    """An SVG picture: ``text`` is the whole ``<svg>`` element.

    Jupyter shows it through :meth:`_repr_svg_`; ``str(svg)`` and ``svg.text``
    give the text to write to a file or to put inside HTML.  ``width`` and
    ``height`` are the size it is shown at (at most ``MAX_WIDTH`` by
    ``MAX_HEIGHT``); ``title`` says what it shows.
    """

    __slots__ = ("text", "width", "height", "title")

    def __init__(self, text: str, width: float = 0, height: float = 0, title: str = ""):
        self.text = text
        self.width = width
        self.height = height
        self.title = title

    def _repr_svg_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        what = f" of {self.title}" if self.title else ""
        if len(what) > 80:
            what = what[:77] + "..."
        return f"<Svg picture{what}, {self.width:g} x {self.height:g} px>"

    def save(self, path) -> None:
        """Write the picture to ``path`` (a ``.svg`` file)."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.text)


def _num(value: float) -> str:
    """A coordinate with at most two decimals, so the text stays short and stable."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def text_width(content: str, size: float) -> float:
    """The estimated width of ``content`` in the monospace font (no font metrics)."""
    return 0.62 * size * len(content)


class Canvas:
    """Collects SVG elements, grows its bounds to fit them, and renders an :class:`Svg`.

    Shapes are drawn first, then arrows, then labels, whatever order the plot
    adds them in.
    """

    def __init__(self, margin: float = 10):
        self.shapes: list[str] = []
        self.arrows: list[str] = []
        self.labels: list[str] = []
        self.margin = margin
        self.max_x = 0.0
        self.max_y = 0.0
        self.markers: set[str] = set()

    def _grow(self, x: float, y: float) -> None:
        self.max_x, self.max_y = max(self.max_x, x), max(self.max_y, y)

    def rect(self, x, y, w, h, *, cls: str, fill: str, title: str | None = None,
             stroke: str = COLORS["grid"], stroke_width: float = 1,
             opacity: float | None = None, dash: str | None = None) -> None:
        """A rectangle; ``title`` becomes a hover tooltip (an SVG ``<title>``)."""
        self._grow(x + w, y + h)
        extra = f' fill-opacity="{_num(opacity)}"' if opacity is not None else ""
        extra += f' stroke-dasharray="{dash}"' if dash else ""
        self.shapes.append(
            f'<rect class="{cls}" x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" '
            f'height="{_num(h)}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{_num(stroke_width)}"{extra}>{_title(title)}</rect>')

    def circle(self, x, y, r, *, cls: str, fill: str, title: str | None = None,
               stroke: str = "none", stroke_width: float = 1) -> None:
        """A filled circle centred on (x, y)."""
        self._grow(x + r, y + r)
        self.shapes.append(
            f'<circle class="{cls}" cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{_num(stroke_width)}">'
            f'{_title(title)}</circle>')

    def _head(self, color: str, arrow: bool) -> str:
        if not arrow:
            return ""
        # One arrow head per colour: SVG 1.1 markers cannot take the line's colour.
        self.markers.add(color)
        return f' marker-end="url(#pp-head-{color.lstrip("#")})"'

    def line(self, x1, y1, x2, y2, *, cls: str, color: str, width: float = 1,
             arrow: bool = False, title: str | None = None, dash: str | None = None) -> None:
        """A segment, with an arrow head at (x2, y2) when ``arrow``."""
        self._grow(max(x1, x2), max(y1, y2))
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        layer = self.arrows if arrow else self.shapes
        layer.append(
            f'<line class="{cls}" x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" '
            f'y2="{_num(y2)}" stroke="{color}" stroke-width="{_num(width)}"{dashes}'
            f'{self._head(color, arrow)}>{_title(title)}</line>')

    def path(self, d: str, *, cls: str, color: str, arrow: bool = False, width: float = 1,
             title: str | None = None, dash: str | None = None, bounds=None,
             fill: str = "none", linecap: str | None = None, opacity: float | None = None,
             layer: str = "arrows", crisp: bool = False) -> None:
        """A path (``d`` in SVG path syntax): curved arrows, self-loops, many dots or
        squares at once.  ``bounds`` is its largest (x, y), so the picture grows to
        hold it; ``layer`` is ``"arrows"`` or ``"shapes"``."""
        if bounds is not None:
            self._grow(*bounds)
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        extra += f' stroke-linecap="{linecap}"' if linecap else ""
        extra += f' fill-opacity="{_num(opacity)}"' if opacity is not None else ""
        extra += ' shape-rendering="crispEdges"' if crisp else ""
        getattr(self, layer).append(
            f'<path class="{cls}" d="{d}" fill="{fill}" stroke="{color}" '
            f'stroke-width="{_num(width)}"{extra}{self._head(color, arrow)}>'
            f'{_title(title)}</path>')

    def text(self, x, y, content: str, *, size: float = LABEL, anchor: str = "start",
             cls: str = "label", color: str = COLORS["text"], weight: str = "normal",
             title: str | None = None, halo: bool = True) -> None:
        """A label with a halo of the background colour (``halo=False`` for text on a
        cell of its own, which no arrow crosses); its width is estimated (no font
        metrics) to size the picture."""
        width = text_width(content, size)
        right = x + (width if anchor == "start" else width / 2 if anchor == "middle" else 0)
        self._grow(right, y + 0.35 * size)
        ring = (f' stroke="{COLORS["background"]}" stroke-width="3" stroke-linejoin="round" '
                f'paint-order="stroke"') if halo else ""
        self.labels.append(
            f'<text class="{cls}" x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" '
            f'text-anchor="{anchor}" fill="{color}" font-weight="{weight}"{ring}>'
            f'{escape(content)}{_title(title)}</text>')

    def place(self, other: Canvas, x: float, y: float) -> None:
        """Draw everything on ``other`` here, its origin at (``x``, ``y``)."""
        self._grow(x + other.max_x, y + other.max_y)
        self.markers |= other.markers
        self.shapes.append(f'<g transform="translate({_num(x)} {_num(y)})">'
                           f'{"".join(other.items)}</g>')

    @property
    def width(self) -> float:
        """The width of what was drawn so far."""
        return self.max_x

    @property
    def items(self) -> list[str]:
        """Every element drawn so far, in the order they are painted."""
        return [*self.shapes, *self.arrows, *self.labels]

    def render(self, title: str | None = None) -> Svg:
        """The finished picture: its natural size is what was drawn plus the margin,
        shown at that size or scaled down to fit ``MAX_WIDTH`` by ``MAX_HEIGHT``."""
        width = self.max_x + 2 * self.margin
        height = self.max_y + 2 * self.margin
        scale = min(1.0, MAX_WIDTH / width, MAX_HEIGHT / height)
        shown_w, shown_h = round(width * scale, 2), round(height * scale, 2)
        defs = ""
        if self.markers:
            heads = "".join(
                f'<marker id="pp-head-{c.lstrip("#")}" viewBox="0 0 10 10" refX="9" '
                f'refY="5" markerWidth="7" markerHeight="7" orient="auto">'
                f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{c}"/></marker>'
                for c in sorted(self.markers))
            defs = f"<defs>{heads}</defs>"
        label = f"<title>{escape(title)}</title>" if title else ""
        background = (f'<rect class="background" x="0.5" y="0.5" width="{_num(width - 1)}" '
                      f'height="{_num(height - 1)}" rx="4" fill="{COLORS["background"]}" '
                      f'stroke="{COLORS["frame"]}"/>')
        text = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(shown_w)}" '
                f'height="{_num(shown_h)}" viewBox="0 0 {_num(width)} {_num(height)}" '
                f'font-family="{FONT}" style="background:{COLORS["background"]};'
                f'color:{COLORS["text"]};max-width:100%;height:auto">'
                f'{label}{defs}{background}<g transform="translate({_num(self.margin)} '
                f'{_num(self.margin)})">{"".join(self.items)}</g></svg>')
        return Svg(text, shown_w, shown_h, title or "")


def _title(title: str | None) -> str:
    return f"<title>{escape(title)}</title>" if title else ""
