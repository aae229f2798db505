"""Schedule primitives on a random program, checked by execution (see ``fuzz_support``).

Each entry of :data:`PRIMITIVES` picks its arguments with a chooser (a
buffer, a layout and pad value, a statement label, a band) and applies the
primitive to a fresh :class:`~polypad.schedule.Schedule`; the result must
give the original's results, through :class:`Relayout` where
``transform_layout`` changed a parameter's shape.  A :class:`PolypadError`
is a legal refusal, unless it says the IR is ill formed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from fuzz_support import NOT_REFUSALS, Case, Report, compare, copies, question

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

# ----------------------------------------------------------------- primitives

#: Layouts for buffers of 8 and of 4 x 4 elements, padded and not.
UNPADDED = ("lambda i: [i // 4, i % 4]", "lambda i: [i % 2, i // 2]", "lambda i, j: [j, i]")
LAYOUTS = {
    (8,): ("lambda i: [i // 3, i % 3]", "lambda i: [i // 5, i % 5]", *UNPADDED[:2]),
    (4, 4): ("lambda i, j: [i, j // 3, j % 3]",
             "lambda i, j: [(4 * i + j) // 5, (4 * i + j) % 5]", UNPADDED[2]),
}
PAD_VALUES = (None, 0, -1, "T.undef()")


@dataclass
class Relayout:
    """The interface change of ``transform_layout`` on parameter ``position``: inputs are
    copied into the new layout (padding holds the pad value, which the function may
    assume), results read back from it (and padding it writes must hold the pad value)."""

    position: int
    index_map: str
    shape: tuple
    new_shape: tuple
    pad: object
    written: bool

    def _places(self):
        f = eval(self.index_map)  # text of our own LAYOUTS
        return {idx: tuple(f(*idx)) for idx in np.ndindex(*self.shape)}

    def inputs(self, args: list) -> list:
        out = copies(args)
        old = args[self.position]
        fill = self.pad if isinstance(self.pad, (int, float)) else 0
        new = np.full(self.new_shape, fill, dtype=old.dtype)
        for idx, place in self._places().items():
            new[place] = old[idx]
        out[self.position] = new
        return out

    def results(self, out: list) -> tuple[list, str | None]:
        new = out[self.position]
        places = self._places()
        logical = np.empty(self.shape, dtype=new.dtype)
        for idx, place in places.items():
            logical[idx] = new[place]
        back = list(out)
        back[self.position] = logical
        if self.written and isinstance(self.pad, (int, float)):
            padding = set(np.ndindex(*self.new_shape)) - set(places.values())
            wrong = [p for p in sorted(padding) if new[p] != self.pad]
            if wrong:
                return back, f"padding {wrong[:4]} does not hold the pad value {self.pad}"
        return back, None


def _writes(func: n.PrimFunc, name: str) -> bool:
    return any(isinstance(s, n.BufferStore) and s.buffer.name == name for s in walk(func.body))


def _layout(choose, buffer: n.Buffer) -> tuple[str, object]:
    return choose.choice(LAYOUTS[tuple(buffer.shape)]), choose.choice(PAD_VALUES)


def _param(choose, func: n.PrimFunc, accessed: bool = False) -> n.Buffer | None:
    """A parameter :data:`LAYOUTS` has layouts for (one ``func`` reads or writes)."""
    used = {x.buffer for x in walk(func.body) if isinstance(x, (n.BufferLoad, n.BufferStore))}
    params = [p for p in func.params if isinstance(p, n.Buffer) and tuple(p.shape) in LAYOUTS
              and (p in used or not accessed)]
    return choose.choice(params) if params else None


def _sequential(sch, choose, func):
    buffer = _param(choose, func, accessed=True)
    if buffer is None:
        return None, None
    sch.sequential_buffer_access(None, buffer.name)
    return f"sequential_buffer_access(None, {buffer.name!r})", None


def _transform_layout(sch, choose, func, then_sequential: bool = False):
    buffer = _param(choose, func)
    if buffer is None:
        return None, None
    index_map, pad = _layout(choose, buffer)
    call = f"transform_layout(None, {buffer.name!r}, {index_map!r}, pad_value={pad!r})"
    sch.transform_layout(None, buffer.name, index_map, pad_value=pad)
    position = func.params.index(buffer)
    new_shape = tuple(sch.func.params[position].shape)
    adapt = Relayout(position, index_map, tuple(buffer.shape), new_shape, pad,
                     _writes(func, buffer.name))
    if then_sequential:
        call += f" + sequential_buffer_access(None, {buffer.name!r})"
        sch.sequential_buffer_access(None, buffer.name)
    return call, adapt


def _cached_layout(sch, choose, func):
    buffer = _param(choose, func, accessed=True)
    if buffer is None:
        return None, None
    index_map, pad = _layout(choose, buffer)
    cache = sch.cache_read(None, buffer.name)
    sch.transform_layout(None, cache, index_map, pad_value=pad)
    return (f"cache_read(None, {buffer.name!r}) + transform_layout(None, {cache!r}, "
            f"{index_map!r}, pad_value={pad!r})"), None


def _cache_write(sch, choose, func):
    buffer = _param(choose, func, accessed=True)
    if buffer is None:
        return None, None
    sch.cache_write(None, buffer.name)
    return f"cache_write(None, {buffer.name!r})", None


def _leaves(func: n.PrimFunc):
    from analyses.instances import labels
    from polypad.model import extract

    model = extract(func)
    names = labels(model)
    return [(names[s.name], s) for s in model.statements if not s.is_assume]


def _distribute(sch, choose, func):
    leaves = _leaves(func)
    if not leaves:
        return None, None
    label = choose.choice(leaves)[0]
    position = choose.choice(["before", "after"])
    sch.distribute(None, [label], position=position)
    return f"distribute(None, [{label!r}], position={position!r})", None


def _units(func: n.PrimFunc):
    """(label, statement) as reorder_by_map names them: a block of TVM's kind (or of
    several statements) is one unit, named after the block (reschedule_blocks)."""
    from polypad.schedule.reschedule_blocks import block_units
    from polypad.schedule.reschedule_scope import scope_of

    scope, _ = block_units(scope_of(func, None))
    return [(scope.label(s), s) for s in scope.statements if not s.is_assume]


def _reorder(sch, choose, func):
    units = _units(func)
    loops = {id(s.loops[0]): s.loops[0] for _, s in units if s.loops}
    if not loops:
        return None, None
    outer = choose.choice(list(loops.values()))
    members = [(label, s) for label, s in units if s.loops and s.loops[0] is outer]
    kinds = ["split", "reverse"] + ["interchange"] * all(len(s.loops) > 1 for _, s in members)
    kind = choose.choice(kinds)
    band = {"split": "floor(d0/2), d0 mod 2", "reverse": "-d0", "interchange": "d1, d0"}[kind]
    parts = [f"{label}[{', '.join(f'd{k}' for k in range(len(s.loops)))}] -> [{band}]"
             for label, s in members]
    text = "{ " + "; ".join(parts) + " }"
    sch.reorder_by_map(None, text)
    return f"reorder_by_map(None, {text!r})", None


def _merge(sch, choose, func):
    pairs = [(a, b) for s in walk(func.body) if isinstance(s, n.SeqStmt)
             for a, b in zip(s.stmts, s.stmts[1:])
             if isinstance(a, n.For) and isinstance(b, n.For)]
    if not pairs:
        return None, None
    a, b = choose.choice(pairs)
    sch.merge_adjacent_loops(a, b)
    return f"merge_adjacent_loops({a.var.name!r}, {b.var.name!r})", None


def _loop(sch, choose):
    """A loop of the schedule's function, by the name the primitives take."""
    loops = sch.get_loops(None)
    return choose.choice(loops) if loops else None


def _split(sch, choose, func):
    loop = _loop(sch, choose)
    if loop is None:
        return None, None
    factor, tail = choose.choice([2, 3]), choose.choice(["predicate", "partition", "pad"])
    sch.split(loop, [None, factor], tail=tail)
    return f"split({loop!r}, [None, {factor}], tail={tail!r})", None


def _nested_pair(sch, choose, func):
    """The names of a leaf's two outermost loops, or None."""
    from polypad.ir.loop_names import loop_name

    deep = [s for _, s in _leaves(func) if len(s.loops) > 1]
    if not deep:
        return None
    s = choose.choice(deep)
    return loop_name(func, s.loops[0]), loop_name(func, s.loops[1])


def _interchange(sch, choose, func):
    pair = _nested_pair(sch, choose, func)
    if pair is None:
        return None, None
    sch.reorder(pair[1], pair[0])
    return f"reorder({pair[1]!r}, {pair[0]!r})", None


def _fuse(sch, choose, func):
    pair = _nested_pair(sch, choose, func)
    if pair is None:
        return None, None
    sch.fuse(*pair)
    return f"fuse({pair[0]!r}, {pair[1]!r})", None


def _one_loop(name: str):
    """A primitive that takes one loop, applied to a random loop."""

    def apply(sch, choose, func):
        loop = _loop(sch, choose)
        if loop is None:
            return None, None
        getattr(sch, name)(loop)
        return f"{name}({loop!r})", None

    return apply


def _decompose(sch, choose, func):
    loop = _loop(sch, choose)
    if loop is None:
        return None, None
    sch.decompose_reduction(None, loop)
    return f"decompose_reduction(None, {loop!r})", None


def _on_the_whole_body(name: str):
    """A primitive that takes only ``block``, applied to the whole function body."""

    def apply(sch, choose, func):
        if not hasattr(sch, name):  # not in this version of polypad
            return None, None
        getattr(sch, name)(None)
        return f"{name}(None)", None

    return apply


PRIMITIVES = {
    "sequential_buffer_access": _sequential,
    "transform_layout": _transform_layout,
    "transform_layout+sequential": lambda sch, c, f: _transform_layout(sch, c, f, True),
    "cache_read+transform_layout": _cached_layout,
    "cache_write": _cache_write,
    "distribute": _distribute,
    "reorder_by_map": _reorder,
    "merge_adjacent_loops": _merge,
    "split": _split,
    "reorder": _interchange,
    "fuse": _fuse,
    "parallel": _one_loop("parallel"),
    "vectorize": _one_loop("vectorize"),
    "unroll": _one_loop("unroll"),
    "rfactor": _one_loop("rfactor"),
    "decompose_reduction": _decompose,
    "remove_branching_through_overcompute": _on_the_whole_body(
        "remove_branching_through_overcompute"),
    "reduce_overcompute_through_branching": _on_the_whole_body(
        "reduce_overcompute_through_branching"),
}


def check_primitives(case: Case, report: Report, choose, names=None) -> None:
    """Each primitive (or those ``names``), with arguments from ``choose``, keeps the
    results; a :class:`PolypadError` other than ill-formed IR is a refusal."""
    from polypad.schedule import Schedule

    for name, apply in PRIMITIVES.items():
        if names is not None and name not in names:
            continue
        sch = Schedule(case.func)
        call = name
        with question(report, name):
            try:
                call, adapt = apply(sch, choose, case.func)
            except NOT_REFUSALS as err:
                report.crash(call, err)
                continue
            except PolypadError as err:
                report.refusal(call, err)
                continue
            except Exception as err:
                report.crash(call, err)
                continue
        if call is not None:
            report.log.append(f"applied: {call}")
            compare(case, sch.func, call, report, adapt)
