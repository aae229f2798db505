"""What ``rfactor`` makes of a reduction's nest: the axes of its partial results,
their buffers, and the record of what it made (shared by :mod:`.rfactor` and
:mod:`.rfactor_arg`)."""

from __future__ import annotations

import dataclasses

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.naming import fresh_name
from polypad.ir.show import show
from polypad.ir.substitute import free_vars, substitute
from polypad.ir.visitor import walk

from .reduction_nest import buffer_names, let_values, offset, reads, single_statement_nest


@dataclasses.dataclass(frozen=True)
class Factored:
    """What ``rfactor`` made: the partial-result buffer and the loops of each nest,
    outermost first (``update`` keeps the original loops); ``decomposed``, the loops
    of the init it moved out first (a ``T.init()`` form), if any."""

    buffer: str
    init: list[str]
    update: list[str]
    write_back: list[str]
    decomposed: list[str] | None = None
    #: An arg-reduction's second partial-result buffer, the indices (``buffer``
    #: holds the values).
    index_buffer: str | None = None


def factor_axes(func: n.PrimFunc, loop: n.For, inner: n.Stmt, buffers, factor_axis: int,
                where: str):
    """The nest around ``inner`` (the reduction's store, or the sequence of an
    arg-reduction's two) and what ``rfactor`` makes of it: the nest, the store's
    indices with the lets inlined, the nest's loops, the reduction loops other than
    ``loop`` (dropped from the init and the write-back) and the axes of the partial
    results, ``loop`` at ``factor_axis``.  Refuses what cannot be factored."""
    nest = single_statement_nest(func, inner)
    names = " and ".join(b.name for b in buffers)
    if not any(x is loop for x in nest):
        raise PolypadError(f"{where} holds more than the reduction into "
                           f"{names}; rfactor a loop around it alone")
    for x in nest:
        around = (x.min, x.extent) if isinstance(x, n.For) else (
            (x.value,) if isinstance(x, n.LetStmt) else
            (x.condition,) if isinstance(x, n.IfThenElse) else ())
        if any(reads(e, b) for e in around for b in buffers):
            raise PolypadError(f"{where}: a loop bound, let or guard around the reduction "
                               f"reads {names}, so its terms depend on its order")
    store = next(x for x in walk(inner) if isinstance(x, n.BufferStore))
    lets = let_values(nest)
    indices = tuple(substitute(i, lets) for i in store.indices)
    indexing = {v for i in indices for v in free_vars(i)}
    if loop.var in indexing:
        raise PolypadError(f"{where} indexes {names}: it is not a reduction loop")
    loops = [x for x in nest if isinstance(x, n.For)]
    dropped = {x.var for x in loops if x.var not in indexing and x is not loop}
    kept = [x for x in loops if x.var in indexing or x is loop]
    spatial = [x for x in kept if x is not loop]
    if not 0 <= factor_axis <= len(spatial):
        raise PolypadError(f"rfactor: factor_axis must be in [0, {len(spatial)}], "
                           f"not {factor_axis}")
    axes = spatial[:factor_axis] + [loop] + spatial[factor_axis:]
    params = {p for p in func.params if isinstance(p, n.Var)}
    for x in axes:
        if not (isinstance(x.extent, n.IntImm) or x.extent in params):
            raise PolypadError(f"rfactor: the loop over {x.var.name} has the extent "
                               f"{show(x.extent)}, neither a constant nor a parameter")
        if dropped & set(free_vars(x.min)):
            raise PolypadError(f"rfactor: the start of the loop over {x.var.name} depends "
                               "on a reduction loop")
    return nest, indices, loops, dropped, axes


def partial_indices(axes, mapping: dict) -> tuple[n.Expr, ...]:
    """The element of the partial results at ``mapping``'s values of the ``axes``'
    variables (their own variables where it has none), each from 0."""
    return tuple(offset(mapping.get(x.var, x.var), substitute(x.min, mapping)) for x in axes)


def partial_buffer(func: n.PrimFunc, buffer: n.Buffer, axes, taken=()) -> n.Buffer:
    """A new buffer ``<buffer>_rf`` of ``buffer``'s dtype, one element per point of
    ``axes``."""
    return n.Buffer(fresh_name(buffer_names(func) | set(taken), f"{buffer.name}_rf"),
                    tuple(x.extent if isinstance(x.extent, n.Var) else x.extent.value
                          for x in axes), buffer.dtype)
