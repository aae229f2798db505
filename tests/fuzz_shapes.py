"""Random programs of the shapes that broke in issue 21, for the fuzz script.

:func:`shape_program` writes one function of ``A`` (8,), ``B`` (4, 4) and
the scalar ``n``, like :func:`fuzz_programs.nest_program`, from a chooser
(:class:`fuzz_programs.Seeded` or :class:`fuzz_programs.Draws`).  It leaves
the older generators' choices alone, so their seeds give the programs they
always gave; ``benchmarks/fuzz.py`` picks this family for some case indices.
Its kinds:

* ``assume``: facts inside loops (``T.assume(p < k or A[p] == v)``, in a loop
  of their own or in the loop that then updates ``A``) beside loops that write
  what they read (``A[(i + c) % 8] = A[(i + d) % 8] + ...``);
* ``edge``: ``n`` near the ends of int32 (``2**31 - 1``, ``-2**31``), bounded
  by an assumption or not, in indices (``(n + i) % 8``), values, conditions and
  loop ranges (``T.serial(n, n + 2)``), where 32-bit arithmetic wraps;
* ``nested``: ``if``/``else`` nested four deep with lets and a local buffer
  allocated inside a loop;
* ``indirect``: data-dependent indices, ``A[B[i, j] % 8]``, as loads and stores;
* ``modular``: issue 21's own nest, two loops updating one buffer through
  quasi-affine indices of both counters (``A[(2 * m + l) % 8]``,
  ``A[((l + 1) % 4) // 2]``), under ``if l % 3 < 1`` / ``else``: where the
  dataflow ISL computed lost the read of a live store.

Every kind mixes in the statements of :class:`fuzz_programs.NestBuilder`,
whose ``element``/``load`` here may also pick a data-dependent index or the
local buffer in scope.

>>> shape = shape_program(Seeded(3))
>>> shape.kind, shape.n_values[:2]
('edge', (-2147483648, -2147483647))
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzz_programs import NestBuilder, NestOptions

KINDS = ("assume", "edge", "nested", "indirect", "modular")
INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)
#: Values of ``n`` near the ends of int32 (and a few small ones) that the inputs draw from.
EDGE_VALUES = (INT32_MAX, INT32_MAX - 1, INT32_MAX - 3, INT32_MAX - 7, INT32_MIN,
               INT32_MIN + 1, INT32_MIN + 3, INT32_MIN + 7, 0, 3)
SMALL_VALUES = tuple(range(0, 17))


@dataclass(frozen=True)
class Shape:
    """A generated function: its text, its kind, and the values ``n`` is drawn from."""

    text: str
    kind: str
    n_values: tuple[int, ...]


class ShapeBuilder(NestBuilder):
    """:class:`NestBuilder` with deeper nesting, local buffers and data-dependent indices."""

    def __init__(self, choose, budget: int, options: NestOptions, dtypes: dict[str, str],
                 n_max: int | None, known: dict[str, int], *, depth: int = 4,
                 indirect: bool = False) -> None:
        super().__init__(choose, budget, options, {**dtypes, "X": "int32"}, n_max, known)
        self.depth = depth  # the deepest indent a compound statement may open
        self.indirect = indirect
        self.locals: list[str] = []  # local buffers in scope, innermost last

    def data_index(self, scope: list[str], size: int) -> str:
        """An index read from an int32 buffer, wrapped into ``[0, size)``."""
        if self.dtypes["B"] == "int32" and (self.dtypes["A"] != "int32" or self.choose.boolean()):
            source = f"B[{self.index(scope, 4)}, {self.index(scope, 4)}]"
        elif self.dtypes["A"] == "int32":
            source = f"A[{self.index(scope, 8)}]"
        else:
            return self.index(scope, size)
        return f"{source} % {size}"

    def some_index(self, scope: list[str], size: int) -> str:
        if self.indirect and self.choose.integer(0, 2) == 0:
            return self.data_index(scope, size)
        return self.index(scope, size)

    def element(self, scope: list[str]) -> str:
        c = self.choose
        if self.locals and c.integer(0, 2) == 0:
            return f"{c.choice(self.locals)}[{self.index(scope, 4)}]"
        if c.boolean():
            return f"A[{self.some_index(scope, 8)}]"
        return f"B[{self.some_index(scope, 4)}, {self.index(scope, 4)}]"

    def load(self, scope: list[str], dtype: str | None = None) -> str:
        element = self.element(scope)
        source = "int32" if element.startswith("X") else self.dtypes[element[0]]
        if dtype is not None and source != dtype:
            return f"T.{dtype}({element})"
        return element

    def stmt(self, scope: list[str], indent: int, loops: int) -> None:
        c, pad = self.choose, "    " * indent
        if indent >= self.depth or self.budget <= 1 or c.integer(0, 3) != 0:
            return super().stmt(scope, indent, loops)
        self.budget -= 1
        kind = c.choice(["alloc", "deep", "assume_loop", "update"])
        if kind == "alloc":
            name = self.fresh("X")
            self.lines.append(f'{pad}{name} = T.alloc_buffer((4,), "int32")')
            self.locals.append(name)
            self.stmts(scope, indent, loops)
            self.locals.pop()
        elif kind == "deep":
            var = self.fresh("x")
            self.lines.append(f"{pad}{var} = {self.affine(scope)}")
            self.lines.append(f"{pad}if {self.cond([*scope, var])}:")
            self.stmt([*scope, var], indent + 1, loops)
            self.lines.append(f"{pad}else:")
            self.stmt([*scope, var], indent + 1, loops)
        elif kind == "assume_loop":
            self.assume_loop(indent)
        else:
            self.update(scope, indent, loops)

    def assume_loop(self, indent: int) -> None:
        """``for p: T.assume(p < k or A[p] == v)``: a fact about A's tail, where it stands."""
        c, pad = self.choose, "    " * indent
        var, k, v = self.fresh("p"), c.integer(1, 7), c.integer(-1, 1)
        self.lines += [f"{pad}for {var} in T.serial(8):",
                       f"{pad}    T.assume({var} < {k} or A[{var}] == {self.literal(v, 'A')})"]

    def update(self, scope: list[str], indent: int, loops: int) -> None:
        """A loop that writes what it reads: ``A[(i + c) % 8] = A[(i + d) % 8] + ...``,
        with a fact about the element it reads first, at times."""
        c, pad = self.choose, "    " * indent
        var = self.fresh("i")
        self.ranges[var] = (0, 4)
        self.lines.append(f"{pad}for {var} in T.serial(4):")
        if c.boolean():
            k, v = c.integer(0, 3), c.integer(-1, 1)
            self.lines.append(f"{pad}    T.assume({var} < {k} or A[{var}] == "
                              f"{self.literal(v, 'A')})")
        write, read = c.integer(0, 7), c.integer(0, 7)
        value = self.value([*scope, var], self.dtypes["A"])
        self.lines.append(f"{pad}    A[({var} + {write}) % 8] = A[({var} + {read}) % 8] + {value}")
        if c.boolean():
            self.stmts([*scope, var], indent + 1, loops + 1)


def _edge_lines(choose) -> tuple[list[str], tuple[int, ...]]:
    """An assumption on ``n`` near an end of int32 (or none), and the values to draw."""
    c = choose
    bound = c.choice(["above", "below", "under_max", "none"])
    if bound == "above":
        lo = INT32_MAX - c.integer(2, 8)
        return [f"    T.assume({lo} <= n)"], tuple(v for v in EDGE_VALUES if v >= lo)
    if bound == "below":
        hi = INT32_MIN + c.integer(2, 8)
        return [f"    T.assume(n <= {hi})"], tuple(v for v in EDGE_VALUES if v <= hi)
    if bound == "under_max":
        return ["    T.assume(n < 2147483647)"], tuple(v for v in EDGE_VALUES if v < INT32_MAX)
    return [], EDGE_VALUES


def _edge_statements(choose, builder: ShapeBuilder) -> None:
    """Loops whose indices, values and ranges add small numbers to ``n``."""
    c = choose
    for _ in range(c.integer(1, 3)):
        var = builder.fresh("i")
        builder.ranges[var] = (0, 4)
        loop = c.choice(["T.serial(4)", "T.serial(4)", "T.serial(n, n + 2)"])
        builder.lines.append(f"    for {var} in {loop}:")
        sign = c.choice(["+", "-"])
        target = c.choice([f"A[(n {sign} {var}) % 8]", f"A[({var} - n) % 8]",
                           f"B[(n {sign} {var}) % 4, {var} % 4]"])
        if builder.dtypes[target[0]] == "float32":
            value = f"T.float32(n {sign} {var})"
        else:
            value = c.choice([f"n {sign} {var}", f"n * 2 + {var}",
                              f"{builder.load([var], 'int32')} + n"])
        builder.lines.append(f"        {target} = {value}")
        if c.boolean():
            cond = c.choice([f"n + {var} > 0", f"n - {var} < 0", "n + 1 > n",
                             f"(n + {var}) % 8 < 4"])
            builder.lines.append(f"        if {cond}:")
            # The builder's indices take loop counters for small: not one running from n.
            builder.stmts([var] if loop == "T.serial(4)" else [], 3, 1)
    builder.stmts([], 1, 0)


def _quasi_affine(choose, ranges: dict[str, tuple[int, int]], size: int = 8) -> str:
    """An index of both counters that stays in ``[0, size)``: a floor modulo, a floor
    division of one, or a floor division that the counters' ranges keep inside."""
    c = choose
    terms = [f"{k} * {v}" if k != 1 else v for v, k in
             ((v, c.choice([-2, -1, 1, 1, 2, 3])) for v in c.subset(sorted(ranges), 2))]
    offset = c.integer(-2, 5)
    expr = " + ".join([*terms, str(offset)])
    form = c.choice(["mod", "mod", "mod_div", "div"])
    if form == "mod_div":
        return f"(({expr}) % {c.choice([4, 6, 8])}) // {c.integer(2, 3)}"
    if form == "div":
        d = c.integer(2, 4)
        values = [eval(expr, {}, dict(zip(ranges, point)))  # noqa: S307 -- our own text
                  for point in _points(ranges)]
        if values and min(values) // d >= 0 and max(values) // d < size:
            return f"({expr}) // {d}"
    return f"({expr}) % {size}"


def _points(ranges: dict[str, tuple[int, int]]):
    out = [()]
    for lo, hi in ranges.values():
        out = [(*p, v) for p in out for v in range(lo, hi)]
    return out


def _modular_nest(choose, builder: ShapeBuilder) -> None:
    """Two loops updating ``A`` through quasi-affine indices of both counters, with an
    ``if``/``else`` on a modulo of the outer one (issue 21's nest)."""
    c = choose
    outer, inner = (0, c.integer(3, 6)), (0, c.integer(2, 3))
    both = {"l": outer, "m": inner}
    lines = builder.lines
    dtype = builder.dtypes["A"]
    one = "1.0" if dtype == "float32" else "1"

    def store(pad: str, ranges: dict) -> None:
        target, source = _quasi_affine(c, ranges), _quasi_affine(c, ranges)
        value = c.choice([f"A[{source}]", f"A[{source}] + {one}", "0" if dtype == "int32"
                          else "0.0", f"T.{dtype}(l) - ({one} + A[{source}])"])
        lines.append(f"{pad}A[{target}] = {value}")

    lines.append(f"    for l in T.serial({outer[1]}):")
    lines.append(f"        for m in T.serial({inner[1]}):")
    store("            ", both)
    lines.append(f"            if l % {c.integer(2, 3)} < {c.integer(1, 2)}:")
    store("                ", both)
    if c.boolean():
        lines.append("            else:")
        store("                ", both)
    for _ in range(c.integer(1, 2)):
        store("        ", {"l": outer})


def shape_program(choose, kind: str | None = None, max_statements: int = 6) -> Shape:
    """A random function of one of :data:`KINDS` (``kind``, or chosen)."""
    c = choose
    kind = kind or c.choice(KINDS)
    options = NestOptions.fuzz(max_statements=max_statements, probes=1)
    dtypes = {b: c.choice(["int32", "int32", "float32"]) for b in "AB"}
    if kind == "indirect":
        dtypes["B"] = "int32"
    params = (f'A: T.Buffer((8,), "{dtypes["A"]}"), B: T.Buffer((4, 4), "{dtypes["B"]}"), '
              'C: T.Buffer((4,), "int32")')
    lines = ["@T.prim_func", f"def func({params}, n: T.int32):"]
    n_values: tuple[int, ...] = SMALL_VALUES
    n_max = None
    if kind == "edge":
        assumed, n_values = _edge_lines(c)
        lines += assumed
    elif c.boolean():
        lo = c.integer(0, 3)
        hi = lo + c.integer(1, 4)
        lines.append(f"    T.assume({lo} <= n and n < {hi})")
        n_values, n_max = tuple(range(lo, hi)), hi - 1
    budget = c.integer(3, max_statements)
    builder = ShapeBuilder(c, budget, options, dtypes, n_max, {},
                           depth=7 if kind == "nested" else 4, indirect=kind == "indirect")
    if kind == "assume":
        builder.assume_loop(1)
        builder.update([], 1, 0)
    elif kind == "nested":
        builder.lines.append("    for i0 in T.serial(4):")
        builder.ranges["i0"] = (0, 4)
        name = builder.fresh("X")
        builder.lines.append(f'        {name} = T.alloc_buffer((4,), "int32")')
        builder.locals.append(name)
        builder.budget += 2
        builder.stmt(["i0"], 2, 1)
        builder.stmt(["i0"], 2, 1)
        builder.locals.pop()
    if kind == "edge":
        _edge_statements(c, builder)
    elif kind == "modular":
        _modular_nest(c, builder)
    else:
        builder.stmts([], 1, 0)
    if builder.probes < 4:
        builder.lines.append(f"    C[{builder.probes}] = T.if_then_else("
                             f"{builder.question([])}, 1, 0)")
    return Shape("\n".join(lines + builder.lines) + "\n", kind, n_values)
