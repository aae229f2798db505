"""Random small loop nests as script text, for hypothesis and for the fuzz script alike.

A generator takes a *chooser*: :class:`Draws` turns each choice into a
hypothesis draw (so examples shrink and the derandomized suite sees the same
programs on every run), :class:`Seeded` makes it from ``random.Random`` (the
fuzz script: no hypothesis engine, one integer seed per case).  Both make the
same calls, so a program found by one can be rebuilt by the other's rules.

Two families:

* :class:`NestBuilder` (the pass properties' generator): loops within
  ``[0, 4)`` (two levels at most), ``if``/``else`` on affine and
  data-dependent conditions, lets, stores and loads at in-bounds indices of
  ``A`` (8,) and ``B`` (4, 4), and assumptions on ``n`` and ``A[0]``.
  :class:`NestOptions` adds, for the fuzz: float32 buffers, integer
  arithmetic that wraps at 32 bits, padding-style assumptions on buffer
  elements, loops over ``n`` and *probes* ``C[k] = T.if_then_else(q, 1, 0)``
  holding a question ``q`` for the prover.
* :func:`structural_program` (the structural deciders' generator): one to
  three loops over float32 buffers of :data:`SIZE` elements, each store
  guarded so that every index stays in bounds.

>>> text = nest_program(Seeded(7), NestOptions.fuzz()).text
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

# ----------------------------------------------------------------- choosers


class Draws:
    """Choices drawn by hypothesis (inside ``@st.composite``)."""

    def __init__(self, draw) -> None:
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def nonzero(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi).filter(bool))

    def choice(self, options: Sequence):
        return self.draw(st.sampled_from(options))

    def boolean(self) -> bool:
        return self.draw(st.booleans())

    def subset(self, options: Sequence, max_size: int) -> list:
        return self.draw(st.lists(st.sampled_from(options), max_size=max_size, unique=True))


class Seeded:
    """Choices made by ``random.Random(seed)``: the same seed, the same program."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def nonzero(self, lo: int, hi: int) -> int:
        return self.rng.choice([v for v in range(lo, hi + 1) if v])

    def choice(self, options: Sequence):
        return self.rng.choice(list(options))

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def subset(self, options: Sequence, max_size: int) -> list:
        unique = list(dict.fromkeys(options))
        return self.rng.sample(unique, self.rng.randint(0, min(max_size, len(unique))))


# ----------------------------------------------------------------- loop nests

#: Multipliers and offsets that make 32-bit integer arithmetic wrap on small inputs.
WRAPPING = (65536, 1073741824, 2147483647, 1000000000, -2147483647)


@dataclass(frozen=True)
class NestOptions:
    """What :class:`NestBuilder` may generate beyond the pass properties' programs.

    The defaults are the pass properties' programs exactly (same choices in
    the same order), with ``n`` in ``[-3, 6)`` unless assumed.
    """

    max_statements: int = 8
    dtypes: bool = False  # A and B may be float32
    wrapping: bool = False  # 32-bit overflow: large multipliers in integer arithmetic
    padding: bool = False  # T.assume(p < k or A[p] == v), T.assume(B[r, c] == v)
    probes: int = 0  # at most this many prover questions, stored into C
    symbolic_loops: bool = False  # `for i in T.serial(n)` when n is assumed small
    fuzz_scalars: bool = False  # n in [0, 17), the range make_inputs draws from
    redundant: bool = False  # stores and ifs the deciders can prove removable

    @classmethod
    def fuzz(cls, max_statements: int = 6, probes: int = 2) -> NestOptions:
        """Everything on; ``n`` in ``[0, 17)`` (the range :func:`make_inputs` draws from)."""
        return cls(max_statements, dtypes=True, wrapping=True, padding=True, probes=probes,
                   symbolic_loops=True, fuzz_scalars=True, redundant=True)


@dataclass(frozen=True)
class Nest:
    """A generated function: its text, the values ``n`` may take, and ``A[0]``'s
    assumed value (``None``: anything)."""

    text: str
    n_range: tuple[int, int]
    a0: int | None


class NestBuilder:
    """Builds one random function body, line by line."""

    def __init__(self, choose, budget: int, options: NestOptions = NestOptions(),
                 dtypes: dict[str, str] | None = None, n_max: int | None = None,
                 known: dict[str, int] | None = None) -> None:
        self.choose = choose
        self.options = options
        self.lines: list[str] = []
        self.counter = 0
        self.budget = budget  # statements left to place
        self.dtypes = dtypes or {"A": "int32", "B": "int32"}
        self.n_max = n_max  # the largest value n may take, when assumed
        self.probes = 0
        self.conditions: list[str] = []  # the conditions that hold where the builder is
        self.known = known or {}  # elements an assumption pins: "A[0]" -> value
        self.ranges: dict[str, tuple] = {}  # loop variable -> (start, stop) or ("n",)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def affine(self, scope: list[str]) -> str:
        c = self.choose
        terms = []
        for v in c.subset([*scope, "n"], 2):
            k = c.nonzero(-2, 3)
            if self.options.wrapping and c.integer(0, 5) == 0:
                k = c.choice(WRAPPING)
            terms.append(v if k == 1 else f"{k} * {v}")
        expr = " + ".join([*terms, str(c.integer(-3, 3))])
        if c.integer(0, 3) == 0:
            expr = f"({expr}) // {c.integer(2, 4)}"
        return expr

    def index(self, scope: list[str], size: int) -> str:
        """An index into an axis of ``size``: loop counters stay in [0, 4), so these
        forms stay in bounds; a rare wrapped affine index adds floor modulo."""
        c = self.choose
        loops = [v for v in scope if v.startswith("i")]
        forms = ["const", "wrapped"] + (["var", "var", "offset"] if loops else [])
        if size == 8 and loops:
            forms += ["double", "pair"]
        form = c.choice(forms)
        if form == "const":
            return str(c.integer(0, size - 1))
        if form == "wrapped":
            return f"({self.affine(scope)}) % {size}"
        v = c.choice(loops)
        if form == "var":
            return v
        if form == "offset":
            return f"{v} + {c.integer(0, size - 4)}" if size > 4 else f"3 - {v}"
        if form == "double":
            return f"2 * {v}"
        return f"{v} + {c.choice(loops)}"

    def element(self, scope: list[str]) -> str:
        if self.choose.boolean():
            return f"A[{self.index(scope, 8)}]"
        return f"B[{self.index(scope, 4)}, {self.index(scope, 4)}]"

    def load(self, scope: list[str], dtype: str | None = None) -> str:
        """A load of A or B, cast to ``dtype`` when given and different."""
        if self.choose.boolean():
            buffer, text = "A", f"A[{self.index(scope, 8)}]"
        else:
            buffer, text = "B", f"B[{self.index(scope, 4)}, {self.index(scope, 4)}]"
        if dtype is not None and self.dtypes[buffer] != dtype:
            return f"T.{dtype}({text})"
        return text

    def cond(self, scope: list[str], depth: int = 0) -> str:
        c = self.choose
        kinds = ["affine", "affine", "data", "and", "or", "not"] if depth < 2 else [
            "affine", "data"]
        if self.options.redundant and any(v.startswith("i") for v in scope):
            kinds.append("bound")
        kind = c.choice(kinds)
        if kind == "bound":
            return self.bound(scope)
        if kind == "affine":
            op = c.choice(["<", "<=", "==", "!=", ">", ">="])
            return f"{self.affine(scope)} {op} {c.integer(-2, 4)}"
        if kind == "data":
            return f"{self.load(scope)} > {c.integer(-3, 3)}"
        if kind == "not":
            return f"not ({self.cond(scope, depth + 1)})"
        return f"({self.cond(scope, depth + 1)}) {kind} ({self.cond(scope, depth + 1)})"

    def bound(self, scope: list[str]) -> str:
        """A condition on an enclosing loop counter that its range makes (nearly) always
        true: the kind of guard a conditional-removal decider should see through."""
        c = self.choose
        v = c.choice([v for v in scope if v.startswith("i")])
        lo, hi = self.ranges[v] if len(self.ranges[v]) == 2 else (0, "n")
        return c.choice([f"{v} >= {lo}", f"{v} < {hi}", f"{v} + 1 < {hi}", f"{v} > {lo}"])

    def literal(self, value: int, buffer: str) -> str:
        return f"{value}.0" if self.dtypes[buffer] == "float32" else str(value)

    def value(self, scope: list[str], dtype: str = "int32") -> str:
        c = self.choose
        kinds = ["const", "load", "sum", "affine"]
        if self.options.wrapping and dtype == "int32":
            kinds.append("wrap")
        kind = c.choice(kinds)
        if kind == "const":
            k = c.integer(-3, 3)
            return f"{k}.0" if dtype == "float32" else str(k)
        if kind == "load":
            return self.load(scope, dtype)
        if kind == "sum":
            return f"{self.load(scope, dtype)} + {self.load(scope, dtype)}"
        if kind == "wrap":
            return f"{self.load(scope, dtype)} * {c.choice(WRAPPING)} + {c.integer(-3, 3)}"
        affine = self.affine(scope)
        return f"T.float32({affine})" if dtype == "float32" else affine

    def question(self, scope: list[str]) -> str:
        """A condition for the prover, often one that holds: an enclosing condition,
        a loop's range, a fact assumed, or an identity that wrapping breaks."""
        c = self.choose
        kinds = ["random", "affine"]
        kinds += ["enclosing"] * bool(self.conditions)
        kinds += ["element", "wrap"]
        kind = c.choice(kinds)
        if kind == "enclosing":
            held = c.choice(self.conditions)
            return held if c.boolean() else f"({held}) or ({self.cond(scope)})"
        if kind == "affine":
            e = self.affine(scope)
            return c.choice([f"({e}) % 4 >= 0", f"({e}) // 2 * 2 <= {e}",
                             f"{e} + 1 > {e}", f"{e} - {e} == 0"])
        if kind == "element":
            return f"{self.load(scope)} == {c.integer(-3, 3)}"
        if kind == "wrap":
            v = c.choice([*scope, "n"])
            return c.choice([f"{v} * 65536 // 65536 == {v}", f"{v} + 2147483647 >= {v}",
                             f"{self.load(scope, 'int32')} * 1073741824 >= 0"])
        return self.cond(scope)

    def stmts(self, scope: list[str], indent: int, loops: int) -> None:
        for k in range(self.choose.integer(1, 2)):
            if k and self.budget <= 0:
                break
            self.stmt(scope, indent, loops)

    def stmt(self, scope: list[str], indent: int, loops: int) -> None:
        c, pad = self.choose, "    " * indent
        kinds = ["store", "if"] + (["for", "for"] if loops < 2 else []) + ["let"]
        if self.probes < self.options.probes:
            kinds.append("probe")
        if self.options.redundant:
            kinds += ["same", "twice"] + ["known"] * bool(self.known)
        self.budget -= 1
        kind = c.choice(kinds if indent < 4 and self.budget > 0 else ["store"])
        if kind == "store":
            if c.boolean():
                index = self.index(scope, 8)
                self.lines.append(f"{pad}A[{index}] = {self.value(scope, self.dtypes['A'])}")
            else:
                target = f"B[{self.index(scope, 4)}, {self.index(scope, 4)}]"
                self.lines.append(f"{pad}{target} = {self.value(scope, self.dtypes['B'])}")
        elif kind == "same":  # stores what is there already
            element = self.element(scope)
            self.lines.append(f"{pad}{element} = {element}")
        elif kind == "known":  # stores what an assumption says is there
            element = c.choice(sorted(self.known))
            self.lines.append(f"{pad}{element} = {self.literal(self.known[element], element[0])}")
        elif kind == "twice":  # the first store is overwritten before anything reads it
            element = self.element(scope)
            dtype = self.dtypes[element[0]]
            self.lines.append(f"{pad}{element} = {self.value(scope, dtype)}")
            self.lines.append(f"{pad}{element} = {self.value(scope, dtype)}")
        elif kind == "probe":
            self.lines.append(f"{pad}C[{self.probes}] = T.if_then_else("
                              f"{self.question(scope)}, 1, 0)")
            self.probes += 1
        elif kind == "if":
            cond = self.cond(scope)
            if self.options.redundant and c.integer(0, 3) == 0:  # both branches alike
                element = self.element(scope)
                body = f"{element} = {self.value(scope, self.dtypes[element[0]])}"
                self.lines += [f"{pad}if {cond}:", f"{pad}    {body}", f"{pad}else:",
                               f"{pad}    {body}"]
                return
            self.lines.append(f"{pad}if {cond}:")
            self.conditions.append(cond)
            self.stmts(scope, indent + 1, loops)
            self.conditions.pop()
            if c.boolean():
                self.lines.append(f"{pad}else:")
                self.conditions.append(f"not ({cond})")
                self.stmts(scope, indent + 1, loops)
                self.conditions.pop()
        elif kind == "for":
            var = self.fresh("i")
            start = c.integer(0, 2)
            stop = c.integer(start + 1, 4)
            loop_range = f"{start}, {stop}"
            self.ranges[var] = (start, stop)
            if (self.options.symbolic_loops and self.n_max is not None and self.n_max <= 4
                    and c.integer(0, 2) == 0):
                loop_range, self.ranges[var] = "n", ("n",)
            self.lines.append(f"{pad}for {var} in T.serial({loop_range}):")
            self.stmts([*scope, var], indent + 1, loops + 1)
        else:
            var = self.fresh("x")
            self.lines.append(f"{pad}{var} = {self.affine(scope)}")
            self.stmts([*scope, var], indent, loops)


def nest_program(choose, options: NestOptions = NestOptions()) -> Nest:
    """A random function of ``A``, ``B`` (and ``C`` with probes) and the scalar ``n``."""
    c = choose
    budget = c.integer(2, options.max_statements)
    dtypes = {"A": "int32", "B": "int32"}
    if options.dtypes:
        dtypes = {b: c.choice(["int32", "float32"]) for b in dtypes}
    params = f'A: T.Buffer((8,), "{dtypes["A"]}"), B: T.Buffer((4, 4), "{dtypes["B"]}")'
    if options.probes:
        params += ', C: T.Buffer((4,), "int32")'
    lines = ["@T.prim_func", f"def func({params}, n: T.int32):"]
    n_range = (0, 17) if options.fuzz_scalars else (-3, 6)
    n_max = None
    # The fuzz assumes a range of n more often: an unbounded n in an index may wrap, and
    # then the deciders cannot model the function at all.
    assume_n = c.integer(0, 3) != 0 if options.fuzz_scalars else c.boolean()
    if assume_n:
        lo = c.integer(0, 3) if options.fuzz_scalars else c.integer(-2, 2)
        n_range = (lo, lo + c.integer(1, 4))
        n_max = n_range[1] - 1
        lines.append(f"    T.assume({n_range[0]} <= n and n < {n_range[1]})")
    a0 = None
    known = {}
    if c.boolean():
        a0 = c.integer(-3, 3)
        lines.append(f"    T.assume(A[0] == {a0})")
        known["A[0]"] = a0
    if options.padding:
        if c.boolean():
            k, v = c.integer(1, 7), c.integer(-1, 1)
            lines += ["    for p in T.serial(8):", f"        T.assume(p < {k} or A[p] == {v})"]
            known.update({f"A[{p}]": v for p in range(k, 8)})
        if c.boolean():
            r, col, v = c.integer(0, 3), c.integer(0, 3), c.integer(-2, 2)
            lines.append(f"    T.assume(B[{r}, {col}] == {v})")
            known[f"B[{r}, {col}]"] = v
    builder = NestBuilder(c, budget, options, dtypes, n_max, known)
    builder.stmts([], 1, 0)
    if builder.probes < options.probes:  # at least one question, where the function ends
        builder.lines.append(f"    C[{builder.probes}] = T.if_then_else("
                             f"{builder.question([])}, 1, 0)")
    return Nest("\n".join(lines + builder.lines) + "\n", n_range, a0)


# ----------------------------------------------------------------- structural programs

SIZE = 8  # every buffer of a structural program has this many elements
_BUFFERS = ("A", "B", "C")


def index_expr(choose, var: str) -> str:
    """An affine index over ``var``: ``a * var + c``."""
    scale = choose.choice([0, 1, 1, 1, -1, 2])
    offset = choose.integer(-2, 3)
    if scale == 0:
        return str(offset % SIZE)
    term = var if scale == 1 else f"-{var}" if scale == -1 else f"{scale} * {var}"
    return f"{term} + {offset}" if offset > 0 else f"{term} - {-offset}" if offset else term


def view_access(choose, buffer: str, index: str, views: Sequence[str] = ()) -> str:
    """``buffer[index]`` or, where ``buffer`` has views (:func:`view_declarations`), the
    same element through one: the flat ``X_1``, the 2-D ``X_2`` or, at a constant
    element from 2 on, ``X_3`` that starts at element 2."""
    if buffer not in views:
        return f"{buffer}[{index}]"
    constant = index.lstrip("-").isdigit()
    how = choose.choice(["direct", "flat", "rows", "offset" if constant else "rows"])
    if how == "flat":
        return f"{buffer}_1[{index}]"
    if how == "rows" and constant:
        return f"{buffer}_2[{int(index) // 4}, {int(index) % 4}]"
    if how == "rows":
        return f"{buffer}_2[({index}) // 4, ({index}) % 4]"
    if how == "offset" and int(index) >= 2:
        return f"{buffer}_3[{int(index) - 2}]"
    return f"{buffer}[{index}]"


def view_declarations(views: Sequence[str]) -> list[str]:
    """The views :func:`view_access` uses, of each buffer of ``views`` (of SIZE elements)."""
    out = []
    for b in views:
        out += [f"{b}_1 = T.decl_buffer(({SIZE},), data={b}.data)",
                f"{b}_2 = T.decl_buffer(({SIZE // 4}, 4), data={b}.data)",
                f"{b}_3 = T.decl_buffer(({SIZE - 2},), data={b}.data, elem_offset=2)"]
    return out


def guarded_store(choose, var: str, buffers=_BUFFERS, param: str | None = None,
                  views: Sequence[str] = ()) -> list[str]:
    """One guarded store ``X[idx] = Y[idx] + ... + c`` over loop variable ``var`` (an
    access of a buffer in ``views`` may go through one of its views)."""
    c = choose
    target = c.choice(buffers)
    write = index_expr(c, var)
    loads = [(c.choice(buffers), index_expr(c, var)) for _ in range(c.integer(0, 2))]
    value = " + ".join([view_access(c, b, i, views) for b, i in loads]
                       + [f"{c.integer(1, 3)}.0"])
    conds = [f"0 <= {i} and {i} < {SIZE}" for i in [write] + [i for _, i in loads]
             if not i.lstrip("-").isdigit()]
    extra = c.choice([None, None, f"{var} % 2 == 0", f"{var} > 1", "param"])
    if extra == "param" and param is not None:
        conds.append(f"{var} < {param}")
    elif extra not in (None, "param"):
        conds.append(extra)
    store = f"{view_access(c, target, write, views)} = {value}"
    if not conds:
        return [store]
    return [f"if {' and '.join(conds)}:", f"    {store}"]


def loop(choose, var: str, extent: int, buffers=_BUFFERS, param=None,
         views: Sequence[str] = ()) -> list[str]:
    """``for var in T.serial(extent):`` with one or two statements."""
    body: list[str] = []
    for _ in range(choose.integer(1, 2)):
        body += guarded_store(choose, var, buffers, param, views)
    return [f"for {var} in T.serial({extent}):"] + [f"    {line}" for line in body]


def program_text(body: list[str], *, local: bool = False, param: str | None = None,
                 views: Sequence[str] = ()) -> str:
    """A function over buffers A, B, C (and a local X, a scalar ``param``) running ``body``,
    with the views of the buffers in ``views`` declared first."""
    params = ", ".join(f'{b}: T.Buffer(({SIZE},), "float32")' for b in _BUFFERS)
    if param is not None:
        params += f", {param}: T.int32"
    lines = ["@T.prim_func", f"def f({params}):"]
    if local:
        lines.append(f'    X = T.alloc_buffer(({SIZE},), "float32")')
    lines += [f"    {line}" for line in view_declarations(views) + body]
    return "\n".join(lines) + "\n"


def structural_program(choose, *, same_extent: bool = False, local: bool = False,
                       param: str | None = None, n_loops: int | None = None,
                       aliases: bool = False) -> str:
    """A function of one to three loops (two adjacent ones over ``i`` when ``same_extent``);
    with ``aliases``, some buffers have views (of other shapes) that accesses go through."""
    buffers = _BUFFERS + (("X",) if local else ())
    views = (choose.subset(buffers, len(buffers)) or [buffers[0]]) if aliases else ()
    count = n_loops if n_loops is not None else choose.integer(1, 3)
    extent = choose.integer(1, 6)
    body: list[str] = []
    for k in range(count):
        var = "i" if same_extent else f"i{k}"
        size = extent if same_extent else choose.integer(1, 6)
        body += loop(choose, var, size, buffers, param, views)
    return program_text(body, local=local, param=param, views=views)
