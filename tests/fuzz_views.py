"""Random loop nests that write through views at offsets, for the fuzz script.

:func:`views_program` writes one function of ``A`` and ``B`` (16 int32
elements each), ``C`` (4 probes) and the scalar ``n`` from a chooser
(:class:`fuzz_programs.Seeded` or :class:`fuzz_programs.Draws`), in shapes
the other generators do not make:

* views of ``A`` at offsets: ``A_1`` (1-D from element ``o``), ``A_2``
  (rows of 4 from element ``o``) and ``A_3``, declared over ``A_1.data``
  (a view of a view, at its own offset);
* loop counters of ``int64`` beside ``int32`` ones (``T.serial(T.int64(5))``),
  mixed in one index;
* ``T.if_then_else`` in indices (``A_1[T.if_then_else(i < 2, i + 3, 7 - i)]``),
  beside floor divisions and moduli of the counters;
* reductions into a view (``A_2[r, c] = T.max(A_2[r, c], B[k + 1])`` over a
  loop of ``k``);
* ``T.assume(i < k or B[i] == v)`` inside the loops, beside the stores;
* probes ``C[k] = T.if_then_else(q, 1, 0)`` on elements read through views.

Every index is evaluated here at every iteration of its loops and shifted
(or reduced modulo the extent) into its buffer, so each access stays in
bounds; ``n`` is assumed in a small range and guards some statements.

>>> program = views_program(Seeded(3))
>>> program.n_values, sorted(program.features)
((1, 2), ['int64', 'reduce'])
"""

from __future__ import annotations

from dataclasses import dataclass

SIZE = 16  # elements of A and B
PARAMS = ('A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32"), '
          'C: T.Buffer((4,), "int32"), n: T.int32')


@dataclass(frozen=True)
class ViewsProgram:
    """A generated function: its text, the values ``n`` is drawn from, and the
    features it holds (``"int64"``, ``"select"``, ``"reduce"``, ``"assume"``,
    ``"nested view"``), which the tests count."""

    text: str
    n_values: tuple[int, ...]
    features: frozenset[str]


@dataclass(frozen=True)
class _View:
    name: str
    shape: tuple[int, ...]  # (extent,) or (rows, 4)
    offset: int  # its first element, in A


@dataclass(frozen=True)
class _Index:
    """An index expression's text and its value at each point of the loops in scope."""

    text: str
    values: tuple[int, ...]


class _Builder:
    def __init__(self, choose):
        self.c = choose
        self.lines: list[str] = []
        self.features: set[str] = set()
        self.counters = 0
        self.views = self._views()

    # ------------------------------------------------------------ views

    def _views(self) -> list[_View]:
        c = self.c
        first = c.choice([1, 2, 4])
        views = [_View("A_1", (SIZE - first,), first)]
        start = c.choice([0, 2, 4])
        rows = c.integer(2, (SIZE - start) // 4)
        views.append(_View("A_2", (rows, 4), start))
        if c.boolean():  # a view declared over the first view's data
            offset = c.integer(first, 8)
            views.append(_View("A_3", (c.integer(3, SIZE - offset),), offset))
            self.features.add("nested view")
        for v in views:
            data = "A_1.data" if v.name == "A_3" else "A.data"
            shape = ", ".join(map(str, v.shape)) + ("," if len(v.shape) == 1 else "")
            self.lines.append(f'    {v.name} = T.decl_buffer(({shape}), "int32", data={data}, '
                              f"elem_offset={v.offset})")
        return views

    # ------------------------------------------------------------ indices

    def _points(self, scope: list[tuple[str, int, str]]) -> list[dict[str, int]]:
        out: list[dict[str, int]] = [{}]
        for name, extent, _ in scope:
            out = [{**p, name: v} for p in out for v in range(extent)]
        return out

    def _raw_index(self, scope) -> _Index:
        """An expression of the counters in scope (a constant outside any loop)."""
        c = self.c
        points = self._points(scope)
        if not scope:
            k = c.integer(0, 5)
            return _Index(str(k), (k,) * len(points))
        picked = c.subset([s[0] for s in scope], 2) or [scope[-1][0]]
        coeffs = {v: c.choice([-2, -1, 1, 1, 2]) for v in picked}
        const = c.integer(-2, 3)
        text = " + ".join(f"{k} * {v}" if k not in (1, -1) else (v if k == 1 else f"-{v}")
                          for v, k in coeffs.items()) + f" + {const}"

        def affine(p):
            return sum(k * p[v] for v, k in coeffs.items()) + const
        form = c.choice(["affine", "affine", "select", "mod", "div"])
        if form == "select":
            v = picked[0]
            extent = next(e for name, e, _ in scope if name == v)
            split = c.integer(1, max(1, extent - 1))
            other = c.integer(0, 6)
            self.features.add("select")
            return _Index(f"T.if_then_else({v} < {split}, {text}, {other} - {v})",
                          tuple(affine(p) if p[v] < split else other - p[v] for p in points))
        if form == "mod":
            m = c.choice([3, 4, 5])
            return _Index(f"({text}) % {m}", tuple(affine(p) % m for p in points))
        if form == "div":
            d = c.choice([2, 3])
            return _Index(f"({text}) // {d}", tuple(affine(p) // d for p in points))
        return _Index(text, tuple(affine(p) for p in points))

    def index(self, scope, extent: int) -> str:
        """An index in ``[0, extent)`` at every point of ``scope``'s loops."""
        raw = self._raw_index(scope)
        lo, hi = min(raw.values), max(raw.values)
        if hi - lo < extent:
            shift = self.c.integer(-lo, extent - 1 - hi)
            return raw.text if shift == 0 else f"{raw.text} + {shift}" if shift > 0 \
                else f"{raw.text} - {-shift}"
        return f"({raw.text}) % {extent}"

    def access(self, scope, target: bool = False) -> str:
        """An element of A through one of its views (or of A itself, or of B to read)."""
        c = self.c
        options = [v.name for v in self.views] + ["A"] + ([] if target else ["B", "B"])
        name = c.choice(options)
        if name in ("A", "B"):
            return f"{name}[{self.index(scope, SIZE)}]"
        view = next(v for v in self.views if v.name == name)
        return f"{name}[{', '.join(self.index(scope, e) for e in view.shape)}]"

    # ------------------------------------------------------------ statements

    def store(self, scope, pad: str) -> None:
        c = self.c
        loads = [self.access(scope) for _ in range(c.integer(0, 2))]
        value = " + ".join(loads + [str(c.integer(-2, 3))])
        line = f"{pad}{self.access(scope, target=True)} = {value}"
        if scope and c.integer(0, 3) == 0:  # guarded by n
            self.lines += [f"{pad}if {scope[-1][0]} < n:", "    " + line]
        else:
            self.lines.append(line)

    def reduce(self, scope, pad: str) -> None:
        """A loop folding ``B`` into one element of a view."""
        c = self.c
        k, extent, dtype = self.loop_var(), c.integer(2, 4), c.choice(["int32", "int64"])
        target = self.access(scope, target=True)
        inner = scope + [(k, extent, dtype)]
        source = f"B[{self.index(inner, SIZE)}]"
        combine = c.choice(["+", "max", "min"])
        value = (f"{target} + {source}" if combine == "+"
                 else f"T.{combine}({target}, {source})")
        self.lines += [f"{pad}for {k} in T.serial({self.extent(extent, dtype)}):",
                       f"{pad}    {target} = {value}"]
        self.features.add("reduce")

    def assume(self, scope, pad: str) -> None:
        """``T.assume(i < k or B[i + d] == v)`` at this point of the loop over ``i``."""
        c = self.c
        name, extent, _ = scope[-1]
        d = c.integer(0, SIZE - extent)
        self.lines.append(f"{pad}T.assume({name} < {c.integer(0, extent)} or "
                          f"B[{name} + {d}] == {c.integer(-2, 3)})")
        self.features.add("assume")

    def loop_var(self) -> str:
        self.counters += 1
        return "ijkl"[self.counters - 1] if self.counters <= 4 else f"v{self.counters}"

    def extent(self, extent: int, dtype: str) -> str:
        if dtype == "int64":
            self.features.add("int64")
            return f"T.int64({extent})"
        return str(extent)

    def body(self, scope, pad: str, depth: int) -> None:
        c = self.c
        for _ in range(c.integer(1, 3)):
            kind = c.choice(["store", "store", "reduce", "loop", "assume"])
            if kind == "loop" and depth < 2:
                var, extent = self.loop_var(), c.integer(2, 5)
                dtype = c.choice(["int32", "int64"])
                self.lines.append(f"{pad}for {var} in T.serial({self.extent(extent, dtype)}):")
                self.body(scope + [(var, extent, dtype)], pad + "    ", depth + 1)
            elif kind == "reduce":
                self.reduce(scope, pad)
            elif kind == "assume" and scope:
                self.assume(scope, pad)
            else:
                self.store(scope, pad)

    def probe(self, k: int) -> None:
        c = self.c
        q = f"{self.access([])} {c.choice(['<', '<=', '==', '!='])} {self.access([])}"
        self.lines.append(f"    C[{k}] = T.if_then_else({q}, 1, 0)")


def views_program(choose) -> ViewsProgram:
    """A random function of the shapes in the module docstring."""
    c = choose
    lo = c.integer(0, 3)
    hi = lo + c.integer(1, 4)
    builder = _Builder(c)
    lines = ["@T.prim_func", f"def func({PARAMS}):", f"    T.assume({lo} <= n and n < {hi})"]
    var, extent = builder.loop_var(), c.integer(2, 6)
    dtype = c.choice(["int32", "int64"])
    builder.lines.append(f"    for {var} in T.serial({builder.extent(extent, dtype)}):")
    builder.body([(var, extent, dtype)], "        ", 1)
    builder.body([], "    ", 0)
    for k in range(c.integer(1, 2)):
        builder.probe(k)
    return ViewsProgram("\n".join(lines + builder.lines) + "\n", tuple(range(lo, hi)),
                        frozenset(builder.features))
