"""What the read and write caches share: naming, the copy stage, the access checks."""

from __future__ import annotations

from polypad.errors import IllegalTransformError, NotFoundError
from polypad.ir import nodes as n
from polypad.ir.locate import find_block, find_buffer
from polypad.ir.naming import fresh_block_name
from polypad.ir.operators import as_expr
from polypad.ir.stages import loads_of, stores_to
from polypad.ir.visitor import walk

_LOOP_NAMES = ("i", "j", "k", "l")


def cache_buffer(func: n.PrimFunc, buffer: n.Buffer, scope: str, name: str | None
                 ) -> n.Buffer:
    """A new buffer like ``buffer``, named ``name`` or ``A_cache`` (``A_<scope>`` for a
    scope other than global, as TVM's ``A_local``); a taken name is refused."""
    if name is None:
        name = f"{buffer.name}_cache" if scope == "global" else f"{buffer.name}_{scope}"
    taken = {p.name for p in func.params if isinstance(p, n.Buffer)}
    taken |= {a.buffer.name for a in walk(func.body) if isinstance(a, n.Allocate)}
    if name in taken:
        raise IllegalTransformError(f"a buffer called {name!r} already exists in {func.name}; "
                                    "pass name= to choose another", evidence=name)
    return n.Buffer(name, buffer.shape, buffer.dtype, (), scope)


def copy_stage(func: n.PrimFunc, dst: n.Buffer, src: n.Buffer, name: str) -> n.Stmt:
    """``for i...: with T.block(name): dst[i...] = src[i...]`` over the whole shape."""
    indices = [n.Var(_LOOP_NAMES[k] if k < len(_LOOP_NAMES) else f"i{k}")
               for k in range(len(src.shape))]
    body: n.Stmt = n.Block(fresh_block_name(func, name),
                           n.BufferStore(dst, n.BufferLoad(src, tuple(indices)), tuple(indices)))
    for var, extent in reversed(list(zip(indices, src.shape))):
        body = n.For(var, n.IntImm(0), as_expr(extent, "int32"), n.ForKind.SERIAL, body)
    return body


def target(func: n.PrimFunc, block: str | None, buffer) -> tuple[n.Stmt, n.Buffer]:
    """The block (or the whole body for ``None``) and the buffer a cache is about."""
    found = find_buffer(func, buffer)
    region = func.body if block is None else find_block(func, block)
    return region, found


def require_access(region: n.Stmt, buffer: n.Buffer, kind: str, where: str) -> None:
    """Raise :class:`NotFoundError` when ``region`` does not ``kind`` (read/write) ``buffer``."""
    found = loads_of(region, buffer) if kind == "read" else stores_to(region, buffer)
    if not found:
        raise NotFoundError(f"{where} does not {kind} buffer {buffer.name}")


def describe(block: str | None) -> str:
    """``block 'compute'``, or ``the function`` when no block is named."""
    return "the function" if block is None else f"block {block!r}"
