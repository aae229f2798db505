"""Random TVM-style block nests as script text, for the fuzz script (``--shapes blocks``).

:mod:`fuzz_programs` writes loop nests with almost no block axes; the
block-aware paths of the schedule primitives (bindings rewritten by
``split``/``fuse``/``reorder``, blocks moved by ``compute_at``, caches and
reductions over ``T.axis.reduce``, ``T.init()``) need programs like TVM's:

* one to three *stages*, each a loop nest around one block that writes one
  buffer (``C`` (4, 4) or ``D`` (8,), or a local ``X`` (4, 4) / ``Y`` (8,)
  that a later stage reads), reading the parameters ``A`` (4, 4), ``B``
  (8,) and what earlier stages wrote;
* a *map* stage (``D[vi] = B[7 - vi] + A[vi // 2, vi % 4]``) or a
  *reduction* over a ``T.axis.reduce`` axis of 4 or 8 (a sum or a max),
  with ``T.init()``, with a stage of its own that initialises the
  accumulator, or (into a parameter) accumulating onto what it holds;
* each block axis bound to a loop expression: a counter over the domain
  (``T.axis.remap``), two split loops ``io * 2 + ii``, a fused loop
  ``f // 4, f % 4``, a reversed counter, ``T.where`` over a padded split,
  and (for a parameter, which need not be written everywhere) an offset
  over fewer iterations;
* ``T.reads``/``T.writes`` usually declared, exactly;
* sometimes a map stage as a nested block: an outer block per row (or half)
  around an inner loop and block, whose bindings read the outer axis.

A local buffer is written everywhere before a later stage reads it, so every
run is deterministic.  Same chooser, same program (:class:`fuzz_programs.Seeded`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SHAPES = {"A": (4, 4), "B": (8,), "C": (4, 4), "D": (8,), "X": (4, 4), "Y": (8,)}
LOCAL = ("X", "Y")


@dataclass
class _Axis:
    """A block axis: its name, kind ("S" or "R"), extent, and binding."""

    var: str
    kind: str
    extent: int
    value: str = ""


@dataclass
class _Nest:
    """Loops (name, extent) outer first and a ``T.where`` or None."""

    loops: list[tuple[str, int]] = field(default_factory=list)
    where: str | None = None


class BlockBuilder:
    """Builds one function of block stages, line by line."""

    def __init__(self, choose, dtype: str) -> None:
        self.choose = choose
        self.dtype = dtype
        self.lines: list[str] = []
        self.stage = 0
        self.written: list[str] = []  # buffers written everywhere by earlier stages
        self.locals: list[str] = []
        self.unread: list[str] = []  # local buffers written and not read yet

    # ------------------------------------------------------------ bindings

    def bind(self, nest: _Nest, axes: list[_Axis], partial: bool) -> None:
        """Loops for ``axes`` and each axis's binding (``partial``: some elements of the
        domain may be left out)."""
        c, s = self.choose, self.stage
        if len(axes) == 2 and axes[0].extent == axes[1].extent == 4 and c.integer(0, 4) == 0:
            f = f"f{s}"
            nest.loops.append((f, 16))
            axes[0].value, axes[1].value = f"{f} // 4", f"{f} % 4"
            return
        for axis in axes:
            name = f"{axis.var[1:]}{s}"
            forms = ["plain", "plain", "split", "reversed", "where"]
            if partial and axis.kind == "S":
                forms.append("offset")
            form = c.choice(forms)
            e = axis.extent
            if form == "plain":
                nest.loops.append((name, e))
                axis.value = name
            elif form == "reversed":
                nest.loops.append((name, e))
                axis.value = f"{e - 1} - {name}"
            elif form == "offset":
                nest.loops.append((name, e - 1))
                axis.value = f"{name} + 1"
            elif form == "split":
                nest.loops += [(f"{name}o", e // 2), (f"{name}i", 2)]
                axis.value = f"{name}o * 2 + {name}i"
            else:  # a padded split of 3: the predicate keeps the axis in its domain
                nest.loops += [(f"{name}o", (e + 2) // 3), (f"{name}i", 3)]
                axis.value = f"{name}o * 3 + {name}i"
                cond = f"{axis.value} < {e}"
                nest.where = cond if nest.where is None else f"{nest.where} and {cond}"

    # ------------------------------------------------------------ expressions

    def small(self, spatial: list[str], shape: tuple) -> list[str]:
        """Indices in [0, 4) from the spatial axes of a target of ``shape``."""
        if shape == (4, 4):
            return spatial
        return [f"{spatial[0]} // 2", f"{spatial[0]} % 4"]

    def source(self, sources: list[str]) -> str:
        """A buffer to read: a local one no stage has read yet first (a stage nothing
        reads is no producer for ``compute_at``)."""
        waiting = [b for b in self.unread if b in sources]
        src = waiting[0] if waiting else self.choose.choice(sources)
        if src in self.unread:
            self.unread.remove(src)
        return src

    def load(self, spatial: list[str], shape: tuple, sources: list[str]) -> str:
        """A load of a source, in bounds, at indices from the target's axes."""
        c = self.choose
        src = self.source(sources)
        if shape == (8,):
            (v,) = spatial
            forms = {(8,): [v, f"7 - {v}", f"({v} + 3) % 8"],
                     (4, 4): [f"{v} // 2, {v} % 4", f"{v} % 4, 3 - {v} // 2"]}
        else:
            vi, vj = spatial
            forms = {(8,): [f"{vi} * 2 + {vj} // 2", f"{vj} + 4 * ({vi} % 2)"],
                     (4, 4): [f"{vi}, {vj}", f"{vj}, {vi}", f"{vi}, 3 - {vj}"]}
        return f"{src}[{c.choice(forms[SHAPES[src]])}]"

    def literal(self, k: int) -> str:
        return f"{k}.0" if self.dtype == "float32" else str(k)

    def operand(self, spatial: list[str], shape: tuple, vk: str, extent: int,
                sources: list[str]) -> str:
        """A load reading the reduce axis ``vk`` of ``extent``."""
        c = self.choose
        src = self.source(sources)
        si = c.choice(self.small(spatial, shape))
        if SHAPES[src] == (8,):
            index = vk if extent == 8 else c.choice([f"{vk} * 2", f"{vk} + 4"])
        elif extent == 4:
            index = c.choice([f"{si}, {vk}", f"{vk}, {si}"])
        else:
            index = c.choice([f"{vk} // 2, {si}", f"{si}, {vk} % 4"])
        return f"{src}[{index}]"

    # ------------------------------------------------------------ stages

    def target(self, last: bool) -> str:
        c = self.choose
        options = ["C", "D"] if last else ["X", "Y", "X", "Y", "C", "D"]
        return c.choice(options)

    def stage_lines(self, last: bool) -> None:
        c = self.choose
        target = self.target(last)
        if target in LOCAL and target not in self.locals:
            self.locals.append(target)
        # Not the target: a block reading other elements of what it writes is no stage.
        sources = [b for b in ("A", "B", *self.written) if b != target]
        kind = c.choice(["map", "reduce", "reduce"])
        if kind == "map" and c.integer(0, 3) == 0:
            self.nested_map(target, sources)
        elif kind == "map":
            self.map(target, sources)
        else:
            self.reduce(target, sources)
        if target not in self.written:
            self.written.append(target)
        if target in LOCAL and target not in self.unread:
            self.unread.append(target)
        self.stage += 1

    def axes_of(self, target: str) -> list[_Axis]:
        return [_Axis(v, "S", e) for v, e in zip(("vi", "vj"), SHAPES[target], strict=False)]

    def map(self, target: str, sources: list[str]) -> None:
        shape = SHAPES[target]
        axes = self.axes_of(target)
        nest = _Nest()
        self.bind(nest, axes, partial=target not in LOCAL)
        spatial = [a.var for a in axes]
        loads = [self.load(spatial, shape, sources) for _ in range(self.choose.integer(1, 2))]
        value = " + ".join([*loads, self.literal(self.choose.integer(-2, 2))])
        here = f"{target}[{', '.join(spatial)}]"
        self.emit(nest, f"S{self.stage}", [here + " = " + value], loads, [here], 1, axes)

    def reduce(self, target: str, sources: list[str]) -> None:
        c = self.choose
        shape = SHAPES[target]
        axes = self.axes_of(target)
        extent = c.choice([4, 8])
        reduce_axis = _Axis("vk", "R", extent)
        init = c.choice(["init", "init", "stage"] + ["none"] * (target not in LOCAL))
        combiner = c.choice(["sum", "sum", "max"])
        start = self.literal(0 if combiner == "sum" else -100)
        spatial = [a.var for a in axes]
        here = f"{target}[{', '.join(spatial)}]"
        if init == "stage":
            init_axes = self.axes_of(target)
            nest = _Nest()
            self.bind(nest, init_axes, partial=False)
            self.emit(nest, f"S{self.stage}_init", [f"{here} = {start}"], [], [here], 1,
                      init_axes)
            self.stage += 1  # the update's loops have names of their own
        operands = [self.operand(spatial, shape, "vk", extent, sources)
                    for _ in range(c.integer(1, 2))]
        term = " * ".join(operands)
        update = (f"{here} = {here} + {term}" if combiner == "sum"
                  else f"{here} = T.max({here}, {term})")
        nest = _Nest()
        order = [*axes, reduce_axis]
        if len(axes) == 2 and c.integer(0, 3) == 0:  # the reduce loop between the spatial
            order = [axes[0], reduce_axis, axes[1]]
        self.bind(nest, order, partial=False)
        body = (["with T.init():", f"    {here} = {start}"] if init == "init" else [])
        block_axes = [*axes, reduce_axis]
        self.emit(nest, f"S{self.stage}", body + [update], operands, [here], 1,
                  block_axes)

    def nested_map(self, target: str, sources: list[str]) -> None:
        """An outer block per row (4, 4) or per half (8,) around an inner loop and block."""
        c, s = self.choose, self.stage
        shape = SHAPES[target]
        pad = "    "
        out, inner = f"o{s}", f"n{s}"
        if shape == (4, 4):
            outer_extent, inner_extent = 4, 4
            bindings = [("vi", 4, "vo"), ("vj", 4, inner)]
            region = f"{target}[vo, 0:4]"
        else:
            outer_extent, inner_extent = 2, 4
            bindings = [("vi", 8, f"vo * 4 + {inner}")]
            region = f"{target}[vo * 4:vo * 4 + 4]"
        spatial = [v for v, _, _ in bindings]
        loads = [self.load(spatial, shape, sources) for _ in range(c.integer(1, 2))]
        here = f"{target}[{', '.join(spatial)}]"
        lines = [f"for {out} in T.serial({outer_extent}):",
                 f"{pad}with T.block(\"S{s}_outer\"):",
                 f"{pad * 2}vo = T.axis.spatial({outer_extent}, {out})"]
        if c.boolean():
            lines.append(f"{pad * 2}T.writes({region})")
        lines += [f"{pad * 2}for {inner} in T.serial({inner_extent}):",
                  f"{pad * 3}with T.block(\"S{s}\"):"]
        lines += [f"{pad * 4}{v} = T.axis.spatial({e}, {b})" for v, e, b in bindings]
        if c.boolean():
            lines += self.regions(loads, [here], pad * 4)
        value = " + ".join([*loads, self.literal(c.integer(-2, 2))])
        lines.append(f"{pad * 4}{here} = {value}")
        self.lines += [pad + line for line in lines]

    def regions(self, reads: list[str], writes: list[str], pad: str) -> list[str]:
        """``T.reads``/``T.writes`` of the elements the block touches (a buffer it writes
        is declared only written, as TVM's reductions do)."""
        written = {w.split("[")[0] for w in writes}
        reads = list(dict.fromkeys(r for r in reads if r.split("[")[0] not in written))
        return [f"{pad}T.reads({', '.join(reads)})", f"{pad}T.writes({', '.join(writes)})"]

    def emit(self, nest: _Nest, name: str, body: list[str], reads: list[str],
             writes: list[str], indent: int, block_axes: list[_Axis]) -> None:
        pad = "    "
        lines = []
        names = [v for v, _ in nest.loops]
        if len(nest.loops) > 1 and self.choose.boolean():
            grid = ", ".join(str(e) for _, e in nest.loops)
            lines.append(f"for {', '.join(names)} in T.grid({grid}):")
            depth = 1
        else:
            for k, (v, e) in enumerate(nest.loops):
                lines.append(f"{pad * k}for {v} in T.serial({e}):")
            depth = len(nest.loops)
        inner = pad * (depth + 1)
        lines.append(f"{pad * depth}with T.block(\"{name}\"):")
        for axis in block_axes:
            kind = "spatial" if axis.kind == "S" else "reduce"
            lines.append(f"{inner}{axis.var} = T.axis.{kind}({axis.extent}, {axis.value})")
        if nest.where is not None:
            lines.append(f"{inner}T.where({nest.where})")
        if self.choose.integer(0, 3) != 0:
            lines += self.regions(reads, writes, inner)
        lines += [inner + line for line in body]
        self.lines += [pad * indent + line for line in lines]


@dataclass(frozen=True)
class BlockProgram:
    """A generated function of block stages."""

    text: str
    stages: int


def block_program(choose) -> BlockProgram:
    """A random function of ``A`` (4, 4), ``B`` (8,) into ``C`` (4, 4) and ``D`` (8,)."""
    c = choose
    dtype = c.choice(["float32", "float32", "int32"])
    builder = BlockBuilder(c, dtype)
    count = c.integer(1, 3)
    for k in range(count):
        builder.stage_lines(last=k == count - 1)
    params = ", ".join(f'{b}: T.Buffer({SHAPES[b]}, "{dtype}")' for b in ("A", "B", "C", "D"))
    lines = ["@T.prim_func", f"def func({params}):"]
    lines += [f'    {b} = T.alloc_buffer({SHAPES[b]}, "{dtype}")' for b in builder.locals]
    return BlockProgram("\n".join(lines + builder.lines) + "\n", count)
