"""Where Numba may type a value wider than the IR does: ``math.floor`` and ``math.ceil``
are int64 there, ``**`` may be float64.  :mod:`.emit` keeps a buffer stored such a
value (directly or through a let) an array, which converts it to the buffer's dtype,
rather than a variable, which would widen.
"""

from __future__ import annotations

from polypad.ir import nodes as ir
from polypad.ir.nodes import Buffer, PrimFunc
from polypad.ir.visitor import walk

#: Calls whose Numba type may differ from the IR's: ``math.floor``/``ceil`` are int64,
#: ``**`` may be float64.
_WIDENING = ("floor", "ceil", "pow")


def widening_lets(func: PrimFunc) -> set[ir.Var]:
    """The let-bound variables of ``func`` whose value holds a :data:`_WIDENING` call,
    directly or through other such variables (a let may be printed above a launch)."""
    lets = [x for x in walk(func.body) if isinstance(x, (ir.LetStmt, ir.Let))]
    widening: set[ir.Var] = set()
    changed = True
    while changed:  # a let of a let of a floor
        changed = False
        for let in lets:
            if let.var not in widening and _widens(let.value, widening):
                widening.add(let.var)
                changed = True
    return widening


def _widens(expr: ir.Expr, widening: set[ir.Var]) -> bool:
    return any((isinstance(c, ir.Call) and c.op in _WIDENING)
               or (isinstance(c, ir.Var) and c in widening) for c in walk(expr))


def widening_stores(root: ir.Stmt, widening: set[ir.Var]) -> set[Buffer]:
    """The buffers ``root`` stores a value into that holds a :data:`_WIDENING` call,
    directly or through the let-bound variables ``widening`` (:func:`widening_lets`)."""
    return {x.buffer for x in walk(root)
            if isinstance(x, ir.BufferStore) and _widens(x.value, widening)}
