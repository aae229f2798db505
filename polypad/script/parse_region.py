"""Buffer regions: ``A[vi, 0:16]`` in ``T.reads``/``T.writes``, and ``T.match_buffer`` of one.

A region is a box: per axis a start and an extent.  ``A[vi, 0:16]`` is
``vi`` with extent 1 on the first axis and ``0`` with extent 16 on the
second; a bare buffer name is the whole buffer.  Slices are regions only
here: as a value, ``A[0:4]`` stays a ParseError.

``Asub = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,))`` inside a block makes
``Asub`` a :class:`View`: polypad's IR has no aliasing buffers, so every
access ``Asub[x]`` is read as ``A[vi * 4 + x]``, an offset access to ``A``,
and the function prints (and round-trips) in that form.  The view's shape
must be the region's extents, proved equal for every value of the
variables (leading axes of extent 1 may be dropped, as TVM allows).  An
access outside the view's shape is not checked against it (TVM leaves it
undefined); the block's ``T.reads``/``T.writes``, when declared, catch it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir import operators as ops
from ..ir.nodes import Add, Buffer, Expr, IntImm, Var
from .checks import equal_everywhere
from .parse_buffer import neutral_keywords, parse_shape
from .source import Source, bind_args, dtype_arg, string_arg


@dataclass(frozen=True, eq=False)
class Region:
    """``buffer`` over the box ``starts[k] <= x_k < starts[k] + extents[k]``."""

    buffer: Buffer
    starts: tuple[Expr, ...]
    extents: tuple[Expr, ...]
    node: ast.expr  # where it was written, for messages

    @property
    def text(self) -> str:
        """The region as it was written."""
        return ast.unparse(self.node)


@dataclass(frozen=True, eq=False)
class View:
    """``Asub = T.match_buffer(A[...], shape)``: ``Asub[x]`` is ``A[start + x]``.

    ``starts`` has one entry per axis of ``buffer``; the view's axes are the
    last ``len(shape)`` of them.
    """

    name: str
    buffer: Buffer
    starts: tuple[Expr, ...]
    shape: tuple[int | Var, ...]
    # The variable bound to where it starts (elem_offset=off, off = T.int32()).
    elem_offset: Expr | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def indices(self, local: tuple[Expr, ...]) -> tuple[Expr, ...]:
        """The indices into ``buffer`` of the view's element ``local``."""
        lead = len(self.starts) - len(local)
        out = list(self.starts[:lead])
        for start, x in zip(self.starts[lead:], local, strict=True):
            out.append(_offset(start, x))
        return tuple(out)


def _offset(start: Expr, x: Expr) -> Expr:
    start, x = ops.promote(start, x)
    if isinstance(start, IntImm) and start.value == 0:
        return x
    return ops.add(start, x)


def span_extent(lo: Expr, hi: Expr) -> Expr:
    """``hi - lo``, folded where the text makes it plain (``v * 4:v * 4 + 4`` is 4): the
    extent of a slice ``lo:hi`` and of a loop ``range(lo, hi)``.

    The printer writes a loop from ``m`` with extent ``e`` as ``T.serial(m,
    m + e)``; undoing that addition here is what lets it round trip.
    """
    lo, hi = ops.promote(lo, hi)
    if isinstance(lo, IntImm) and lo.value == 0:
        return hi
    if isinstance(lo, IntImm) and isinstance(hi, IntImm):
        return IntImm(hi.value - lo.value, lo.dtype)
    if isinstance(hi, Add) and hi.a == lo:
        return hi.b
    return ops.sub(hi, lo)


def parse_regions(src: Source, call: ast.Call, fn: str, exprs, env: dict) -> list[Region]:
    """The regions of ``T.reads(...)`` / ``T.writes(...)``: arguments or one list of them."""
    if call.keywords:
        raise src.error(call.keywords[0], f"{fn} takes buffer regions, not keywords")
    args = list(call.args)
    if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
        args = list(args[0].elts)
    return [region(src, a, fn, exprs, env) for a in args]


def region(src: Source, node: ast.expr, fn: str, exprs, env: dict) -> Region:
    """One region: ``A``, ``A[i, j]``, ``A[vi, 0:16]`` (or the same through a view)."""
    if isinstance(node, ast.Name):
        base = _base(src, node, fn, env)
        if isinstance(base, View):
            starts = base.starts
            extents = (IntImm(1),) * (len(starts) - base.ndim) + tuple(
                ops.as_expr(d, "int32") for d in base.shape)
            return Region(base.buffer, starts, extents, node)
        return Region(base, (IntImm(0),) * base.ndim,
                      tuple(ops.as_expr(d, "int32") for d in base.shape), node)
    if not isinstance(node, ast.Subscript):
        raise src.error(node, f"{fn} takes buffer regions such as A[vi, 0:16]")
    base = _base(src, node.value, fn, env)
    key = node.slice
    parts = key.elts if isinstance(key, ast.Tuple) else [key]
    if len(parts) != base.ndim:
        raise src.error(node, f"buffer {base.name} has {base.ndim} dimension"
                              f"{'s' if base.ndim != 1 else ''} but the region has {len(parts)}")
    starts, extents = [], []
    for k, part in enumerate(parts):
        if isinstance(part, ast.Slice):
            if part.step is not None:
                raise src.error(part.step, "a region slice takes no step")
            lo = IntImm(0) if part.lower is None else exprs.index(part.lower, env)
            hi = (ops.as_expr(base.shape[k], "int32") if part.upper is None
                  else exprs.index(part.upper, env))
            starts.append(ops.promote(lo, hi)[0])
            extents.append(span_extent(lo, hi))
        else:
            index = exprs.index(part, env)
            starts.append(index)
            extents.append(IntImm(1, index.dtype))
    if isinstance(base, View):
        lead = len(base.starts) - base.ndim
        starts = base.indices(tuple(starts))
        extents = [IntImm(1)] * lead + extents
        return Region(base.buffer, starts, tuple(extents), node)
    return Region(base, tuple(starts), tuple(extents), node)


def _base(src: Source, node: ast.expr, fn: str, env: dict) -> Buffer | View:
    bound = env.get(node.id) if isinstance(node, ast.Name) else None
    if isinstance(bound, (Buffer, View)):
        return bound
    if isinstance(node, ast.Name) and bound is None:
        raise src.error(node, f"undefined name {node.id!r}")
    raise src.error(node, f"{fn} takes buffer regions such as A[vi, 0:16]")


def match_region(src: Source, call: ast.Call, name: str, exprs, env: dict) -> View:
    """``name = T.match_buffer(A[...], shape, dtype)`` inside a block: a view of ``A``."""
    call = neutral_keywords(src, call, "T.match_buffer")
    source, shape, dtype, scope = bind_args(src, call, "T.match_buffer",
                                            ("param", "shape", "dtype", "scope"), 2)
    if not isinstance(source, (ast.Subscript, ast.Name)):
        raise src.error(source, "T.match_buffer inside a block matches a buffer region, "
                                "such as A[vi * 4:vi * 4 + 4]")
    reg = region(src, source, "T.match_buffer", exprs, env)
    want = dtype_arg(src, dtype) if dtype is not None else reg.buffer.dtype
    if want != reg.buffer.dtype:
        raise src.error(dtype, f"T.match_buffer of a {reg.buffer.dtype} region as {want}: "
                               "the dtypes must be the same")
    dims = parse_shape(src, shape, env)
    if scope is not None:  # a view lives where its buffer does
        string_arg(src, scope, "a buffer scope")
    lead = len(reg.extents) - len(dims)
    if lead < 0:
        raise src.error(call, f"T.match_buffer matches a {len(reg.extents)}-dimensional "
                              f"region with a {len(dims)}-dimensional buffer")
    pairs = [(e, IntImm(1)) for e in reg.extents[:lead]]
    pairs += [(e, ops.as_expr(d, "int32")) for e, d in zip(reg.extents[lead:], dims,
                                                              strict=True)]
    for k, (extent, expected) in enumerate(pairs):
        if not _same(extent, expected):
            raise src.error(source, f"T.match_buffer region {reg.text} has extent "
                                    f"{_show(extent)} on axis {k}, where the buffer "
                                    f"shape needs {_show(expected)}")
    return View(name, reg.buffer, reg.starts, dims)


def _same(a: Expr, b: Expr) -> bool:
    """``a == b`` for every value of their variables (isl decides, through the model:
    :mod:`.checks`)."""
    if a == b:
        return True
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    return equal_everywhere(a, b)


def _show(e: Expr) -> str:
    from .printer import script

    return script(e).strip()
