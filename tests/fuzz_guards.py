"""Random functions whose accesses the bounds analysis may not decide, for the
run-time checks' fuzz (``benchmarks/fuzz.py --shapes guards``).

:func:`guards_program` writes one function of ``A`` (16 ``int32``), the
index buffer ``X`` (8 ``int32``), ``C`` (16), ``D`` (4 x 4) and the scalars
``n`` (``int32``) and ``m`` (``int8``, ``int16``, ``int32`` or ``int64``)
from a chooser (:class:`fuzz_programs.Seeded`), in the shapes that leave
accesses to run time (:mod:`codegen.bounds_guards`):

* indices of ``T.min``/``T.max``/``T.if_then_else``/``//``/``%`` (by
  constants and by ``m``: ``T.floordiv``, ``T.floormod``) over the counters
  and the parameters, gathers through ``X`` (``A[X[i] + n]``), counters of
  ``int8``/``int16``/``int64`` beside ``m`` of another width, which can wrap;
* a view of ``A`` at an offset (``A_1``, 8 elements, of shape ``(8,)`` or
  ``(2, 4)``), whose own shape bounds its accesses at run time as in the
  analysis: an index outside it but inside ``A`` is an error too;
* plain ``assert`` on the parameters (and, inside loops, the counters) at
  random places: first, between loops, inside them -- after an access it
  would make provable, too -- with ``T.assume`` beside them;
* stores under data-dependent ``if``;
* loops a target may run in parallel (``# par``): each iteration stores one
  element of ``C`` of its own (``C[i + e]``, ``e`` the same in every
  iteration, now and then summed over an inner loop, whose checks that do not
  change go before it) and reads no other element of a buffer the loop
  writes.  :attr:`GuardsProgram.parallel` writes them ``T.parallel``,
  :attr:`GuardsProgram.cuda` binds them to ``threadIdx.x``.

Nothing keeps the accesses inside: the inputs (:func:`draw_inputs`: random
``n``, ``m`` and ``X``, some inside, some not) decide.  With ``cuda_friendly``
the program holds nothing the cuda target refuses by design (a gather in an
index, a view at an offset, an assert inside a loop).

>>> program = guards_program(Seeded(3))
>>> program.text == guards_program(Seeded(3)).text
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

M_DTYPES = ("int8", "int16", "int32", "int64")
COUNTER_DTYPES = ("int32", "int32", "int8", "int16", "int64")
SIZES = {"A": (16,), "X": (8,), "C": (16,), "D": (4, 4), "A_1": (8,)}


@dataclass(frozen=True)
class GuardsProgram:
    """A generated function: ``text`` with every loop serial, ``parallel`` with the
    ``# par`` loops ``T.parallel`` (None without one), ``cuda`` with them bound to
    ``threadIdx.x`` (None where the program is not ``cuda_friendly``), the dtype of
    ``m`` and the features held (which the tests count)."""

    text: str
    parallel: str | None
    cuda: str | None
    m_dtype: str
    features: frozenset[str]


class _Builder:
    def __init__(self, choose, cuda_friendly: bool) -> None:
        self.c = choose
        self.cuda_friendly = cuda_friendly
        self.lines: list[str] = []
        self.features: set[str] = set()
        self.counters = 0
        self.view = not cuda_friendly and choose.integer(0, 2) == 0
        #: The view's shape: 8 elements in one axis or two.
        self.view_shape = (8,) if not self.view or choose.boolean() else (2, 4)
        self.asserts = 0

    # ------------------------------------------------------------ expressions

    def atom(self, scope) -> str:
        """A counter in scope, a parameter or a constant."""
        c = self.c
        options = [v for v, _ in scope] + ["n", "m", str(c.integer(0, 5))]
        return c.choice(options)

    def index(self, scope, extent: int, gather: bool = True) -> str:
        """An index meant for ``[0, extent)`` that the analysis may not decide."""
        c = self.c
        v = c.choice([v for v, _ in scope]) if scope else str(c.integer(0, extent - 1))
        p = c.choice(["n", "m"])
        k = c.integer(0, extent - 1)
        forms = ["plain", "plain", "param", "min", "max", "clamp", "select", "div", "mod"]
        if not self.cuda_friendly:  # cuda's barrier plan reads quasi-affine indices only
            forms += ["pdiv", "pmod"] + (["gather", "gather", "gather_param"] if gather else [])
        form = c.choice(forms)
        if form != "plain":
            self.features.add(form)
        match form:
            case "plain":
                return f"{v} + {c.integer(0, 2)}" if c.boolean() else v
            case "param":
                return c.choice([f"{v} + {p}", f"{p} - {v}"]
                                + ([] if self.cuda_friendly else [f"{v} * {p}"]))
            case "min":
                return f"T.min({v} + {p}, {k})"
            case "max":
                return f"T.max({v} - {p}, {c.integer(0, 2)})"
            case "clamp":
                return f"T.min(T.max({v} + {p}, 0), {extent - 1})"
            case "select":
                return f"T.if_then_else({v} < {p}, {v}, {self.atom(scope)})"
            case "div":
                return f"({v} + {p}) // {c.choice([2, 3])}"
            case "mod":
                scaled = f"{v} * {c.integer(2, 3)}" if self.cuda_friendly else f"{v} * {p}"
                return f"({scaled} + {c.integer(0, 3)}) % {c.choice([extent, extent - 1, 5])}"
            case "pdiv":
                return f"T.floordiv({v} + {c.integer(0, 9)}, {p})"
            case "pmod":
                return f"T.floormod({v} + n, {p})"
            case "gather":
                return f"X[{self.index(scope, 8, gather=False)}]"
            case _:  # gather_param
                return f"X[{self.index(scope, 8, gather=False)}] + {p}"

    def access(self, scope, name: str | None = None) -> str:
        c = self.c
        if name is None:
            name = c.choice(["A", "A", "X", "D"] + (["A_1"] if self.view else []))
        shape = SIZES[name]
        if name == "A_1":
            shape = self.view_shape
            self.features.add("view" if len(shape) == 1 else "2-d view")
        return f"{name}[{', '.join(self.index(scope, e) for e in shape)}]"

    def value(self, scope, avoid: tuple[str, ...] = ()) -> str:
        c = self.c
        loads = []
        for _ in range(c.integer(0, 2)):
            name = c.choice([b for b in ("A", "X", "D", "C") if b not in avoid]
                            + (["A_1"] if self.view and "A" not in avoid else []))
            loads.append(self.access(scope, name))
        return " + ".join(loads + [str(c.integer(-3, 3))])

    def condition(self, scope) -> str:
        """A condition on the parameters (and the counters in scope)."""
        c = self.c
        a = c.choice(["n", "m"] + [v for v, _ in scope])
        bound = c.integer(0, 12)
        return c.choice([f"{a} < {bound}", f"0 <= {a}", f"{a} + n < 16",
                         f"0 <= m and m < {bound}", f"n != {bound}", "m % 2 == 0"])

    # ------------------------------------------------------------ statements

    def stated(self, scope, pad: str) -> None:
        """An assert, or now and then a ``T.assume``."""
        self.asserts += 1
        cond = self.condition(scope)
        if self.c.integer(0, 3) == 0:
            self.lines.append(f"{pad}T.assume({cond})")
            self.features.add("assume")
            return
        self.lines.append(f'{pad}assert {cond}, "check {self.asserts}"')
        self.features.add("assert in loop" if scope else "assert")

    def store(self, scope, pad: str) -> None:
        c = self.c
        target = self.access(scope, c.choice(["C", "C", "D", "A"]
                                             + (["A_1"] if self.view else [])))
        line = f"{target} = {self.value(scope)}"
        if c.integer(0, 2) == 0:
            self.features.add("data if")
            cond = f"{self.access(scope, 'X')} > {c.integer(-1, 8)}"
            self.lines += [f"{pad}if {cond}:", f"{pad}    {line}"]
        else:
            self.lines.append(pad + line)

    def loop_var(self) -> str:
        self.counters += 1
        return "ijkl"[self.counters - 1] if self.counters <= 4 else f"v{self.counters}"

    def extent(self, dtype: str) -> tuple[str, int]:
        """A loop's extent text and its largest value (for the indices' constants)."""
        c = self.c
        if c.integer(0, 4) == 0:
            self.features.add("param extent")
            # Bounded: the reference runs every iteration, and n may be 2**31 - 1.
            bounded = "T.min(n, 9)"
            return (bounded if dtype == "int32" else f'T.Cast("{dtype}", {bounded})'), 9
        k = c.integer(1, 8)
        if dtype != "int32":
            self.features.add(dtype)
            return f"T.{dtype}({k})", k
        return str(k), k

    def loop(self, scope, pad: str, depth: int) -> None:
        c = self.c
        var, dtype = self.loop_var(), c.choice(COUNTER_DTYPES)
        text, extent = self.extent(dtype)
        self.lines.append(f"{pad}for {var} in T.serial({text}):")
        inner = scope + [(var, extent)]
        for _ in range(c.integer(1, 3)):
            kind = c.choice(["store", "store", "store", "stated", "loop"])
            if kind == "loop" and depth < 2:
                self.loop(inner, pad + "    ", depth + 1)
            elif kind == "stated" and not self.cuda_friendly:
                self.stated(inner, pad + "    ")
            else:
                self.store(inner, pad + "    ")

    def parallel_loop(self, pad: str) -> None:
        """A loop whose iterations touch distinct elements of C, read nothing written."""
        c = self.c
        var = self.loop_var()
        extent = c.integer(1, 8)
        self.features.add("parallel")
        self.lines.append(f"{pad}for {var} in T.serial({extent}):  # par")
        scope = [(var, extent)]
        shift = c.choice(["n", "m", str(c.integer(0, 16 - extent))]
                         + ([] if self.cuda_friendly else ["X[0]", "X[n]"]))
        target = f"C[{var} + {shift}]"
        if c.integer(0, 2) == 0:  # an inner loop: a check it does not change goes before it
            inner, dtype = self.loop_var(), c.choice(COUNTER_DTYPES)
            text, inner_extent = self.extent(dtype)
            self.lines.append(f"{pad}    for {inner} in T.serial({text}):")
            pad, scope = pad + "    ", scope + [(inner, inner_extent)]
            self.features.add("inner loop")
            line = f"{target} = {target} + {self.value(scope, avoid=('C',))}"
        else:
            line = f"{target} = {self.value(scope, avoid=('C',))}"
        if not self.cuda_friendly and c.integer(0, 3) == 0:
            self.stated(scope, pad + "    ")
        if c.integer(0, 2) == 0:
            self.features.add("data if")
            self.lines += [f"{pad}    if X[{var} % 8] > {c.integer(-1, 8)}:",
                           f"{pad}        {line}"]
        else:
            self.lines.append(f"{pad}    {line}")


def guards_program(choose, cuda_friendly: bool | None = None) -> GuardsProgram:
    """A random function of the shapes in the module docstring (``cuda_friendly``
    drawn too where not given)."""
    c = choose
    if cuda_friendly is None:
        cuda_friendly = c.integer(0, 2) == 0
    m_dtype = c.choice(M_DTYPES)
    b = _Builder(c, cuda_friendly)
    head = ["@T.prim_func",
            'def func(A: T.Buffer((16,), "int32"), X: T.Buffer((8,), "int32"), '
            'C: T.Buffer((16,), "int32"), D: T.Buffer((4, 4), "int32"), n: T.int32, '
            f'm: T.{m_dtype}):']
    if cuda_friendly and c.integer(0, 3) != 0:
        # The cuda target reads an index that may wrap only under top-level facts.
        b.lines.append(f"    T.assume(-{c.integer(20, 1000)} < n and n < {c.integer(20, 1000)} "
                       f"and -{c.integer(20, 100)} < m and m < {c.integer(20, 100)})")
        b.features.add("assume")
    if b.view:
        shape = ", ".join(map(str, b.view_shape)) + ("," if len(b.view_shape) == 1 else "")
        b.lines.append(f'    A_1 = T.decl_buffer(({shape}), "int32", data=A.data, '
                       f"elem_offset={c.integer(0, 8)})")
    for _ in range(c.integer(2, 4)):
        kind = c.choice(["loop", "loop", "parallel", "stated", "store"])
        if kind == "loop":
            b.loop([], "    ", 1)
        elif kind == "parallel":
            b.parallel_loop("    ")
        elif kind == "stated":
            b.stated([], "    ")
        else:
            b.store([], "    ")
    text = "\n".join(head + b.lines) + "\n"
    parallel = cuda = None
    if "# par" in text:
        parallel = _rewrite_par(text, lambda e: f"T.parallel({e})")
    if cuda_friendly:
        cuda = _rewrite_par(text, lambda e: f'T.thread_binding({e}, thread="threadIdx.x")')
    return GuardsProgram(text, parallel, cuda, m_dtype, frozenset(b.features))


def _rewrite_par(text: str, loop) -> str:
    out = []
    for line in text.splitlines():
        if line.endswith("  # par"):
            head, extent = line.split("T.serial(", 1)
            line = head + loop(extent.split("):", 1)[0]) + ":"
        out.append(line)
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- inputs

#: Values a parameter of each dtype is drawn from: small ones, and its ends.
ENDS = {"int8": (127, -128, 120), "int16": (32767, -32768, 32760),
         "int32": (2**31 - 1, -2**31), "int64": (2**63 - 1, -2**63, 2**40)}


def draw_inputs(rng: np.random.Generator, m_dtype: str) -> dict:
    """One call's values: ``n``, ``m`` (small mostly, now and then near their dtype's
    ends), ``X`` (inside ``[0, 8)`` half the time, else in ``[-3, 19]``) and random
    ``A``, ``C``, ``D``."""
    def scalar(dtype: str) -> int:
        if rng.random() < 0.15:
            return int(rng.choice(ENDS[dtype]))
        return int(rng.integers(-2, 14))
    inside = rng.random() < 0.5
    x = rng.integers(0, 8, 8) if inside else rng.integers(-3, 20, 8)
    return {"A": rng.integers(-20, 20, 16).astype("int32"), "X": x.astype("int32"),
            "C": rng.integers(-20, 20, 16).astype("int32"),
            "D": rng.integers(-20, 20, (4, 4)).astype("int32"),
            "n": scalar("int32"), "m": scalar(m_dtype)}
