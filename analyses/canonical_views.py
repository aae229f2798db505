"""Views and vectors written out, for the value analyses.

TVM's lowering prints one piece of memory under two names (a view, ``A_1 =
A.view(96)``) and computes several lanes in one statement (``C[b:b + 4] =
v``).  The model sees through both (an access of a view is one of the buffer
owning the memory, a vector access one access per lane), but the value
analyses state facts about buffers and statements: ``A_1[5]`` and ``A[0, 5]``
would be two unrelated Z3 terms, and a vector store four facts in one.  So
they are asked about :func:`write_out_views_and_lanes` of the function,
which means the same:

* every access through a view is the access of the buffer owning the memory
  at the element the view names (:func:`polypad.ir.views.through_view`:
  flattened over the view's shape, moved by its offset, unflattened over the
  owner's), and the view's declaration goes;
* every vector store is its lanes, one scalar store each, in lane order --
  the same as a vector store, which computes every lane before storing any,
  when no lane reads an element another lane stores (each lane reads at
  most its own element, and the lanes' elements differ); otherwise every
  lane is computed into a local buffer of its own first, and stored after;
* every vector let is one let per lane.

This is what both executors run (``codegen/lower_views.py``,
``codegen/lower_vectors.py``), with the owner's own shape kept instead of a
flat one, so elements keep the names the function's parameters give them.
The tests run the two on random inputs.  :class:`Written` also says which
statement each statement became (a vector store: the statements of its
lanes), for questions about a statement of the original.
"""

from __future__ import annotations

from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.lanes import lane
from polypad.ir.views import is_view, root, through_view
from polypad.ir.visitor import Rewriter, walk


class Written(Rewriter):
    """The rewrite (see the module docstring); :attr:`made` maps each statement
    visited (by identity) to what it became."""

    def __init__(self) -> None:
        self.lanes_of: dict[n.Var, tuple[n.Var, ...]] = {}
        self.made: dict[int, tuple[n.Stmt, n.Stmt]] = {}

    def visit(self, node):
        out = super().visit(node)
        if isinstance(node, n.Stmt):
            self.made[id(node)] = (node, out)
        return out

    def visit_BufferLoad(self, node: n.BufferLoad) -> n.Expr:
        indices = tuple(self.visit(i) for i in node.indices)
        buffer, at = through_view(node.buffer, indices)
        if buffer is node.buffer and all(a is b for a, b in zip(at, node.indices)):
            return node
        return n.BufferLoad(buffer, at)

    def visit_DeclBuffer(self, node: n.DeclBuffer) -> n.Stmt:
        if is_view(node.buffer):
            return self.visit(node.body)  # its accesses now name the owner
        return self.generic_visit(node)

    def visit_BufferStore(self, node: n.BufferStore) -> n.Stmt:
        count = max([dtypes.lanes(node.value.dtype)]
                    + [dtypes.lanes(i.dtype) for i in node.indices])
        if count == 1:
            indices = tuple(self.visit(i) for i in node.indices)
            value = self.visit(node.value)
            buffer, at = through_view(node.buffer, indices)
            if (buffer is node.buffer and value is node.value
                    and all(a is b for a, b in zip(at, node.indices))):
                return node
            return n.BufferStore(buffer, value, at, span=node.span)
        stores, written = [], []
        for k in range(count):
            indices = tuple(self.visit(lane(i, k, self.lanes_of)) for i in node.indices)
            value = self.visit(lane(node.value, k, self.lanes_of))
            buffer, at = through_view(node.buffer, indices)
            stores.append(n.BufferStore(buffer, value, at, span=node.span))
            written.append(indices)
        if _lanes_apart(stores, written):
            return n.SeqStmt(tuple(stores), span=node.span)
        # Every lane computed into a local buffer first, then stored (a let per lane
        # would be read again, after the stores, by the model's reading of lets).
        lanes = n.Buffer(f"{node.buffer.name}_lanes", (count,), node.buffer.dtype,
                         scope="local")
        first = [n.BufferStore(lanes, s.value, (n.IntImm(k),), span=node.span)
                 for k, s in enumerate(stores)]
        then = [n.BufferStore(s.buffer, n.BufferLoad(lanes, (n.IntImm(k),)), s.indices,
                              span=node.span) for k, s in enumerate(stores)]
        return n.Allocate(lanes, n.SeqStmt((*first, *then), span=node.span), span=node.span)

    def visit_LetStmt(self, node: n.LetStmt) -> n.Stmt:
        count = dtypes.lanes(node.value.dtype)
        if count == 1:
            return self.generic_visit(node)
        own = tuple(n.Var(f"{node.var.name}_{k}", dtypes.element(node.var.dtype))
                    for k in range(count))
        values = [self.visit(lane(node.value, k, self.lanes_of)) for k in range(count)]
        self.lanes_of[node.var] = own
        out = self.visit(node.body)
        for var, value in reversed(list(zip(own, values))):
            out = n.LetStmt(var, value, out, span=node.span)
        return out


def _lanes_apart(stores: list[n.BufferStore], written: list[tuple[n.Expr, ...]]) -> bool:
    """Whether storing the lanes one by one is the vector store: the lanes' elements
    are pairwise different (``written``, the lanes' indices in the buffer the store
    names, differ by a nonzero constant in one index at every instance; a view maps
    different elements to different ones) and each lane reads at most its own element
    of the memory it stores to."""
    target = root(stores[0].buffer)
    for k, s in enumerate(stores):
        for x in walk(s.value):
            if (isinstance(x, n.BufferLoad) and root(x.buffer) is target
                    and x.indices != s.indices):
                return False
        for other in written[:k]:
            if not _differ_by_constant(written[k], other):
                return False
    return True


def _differ_by_constant(a: tuple[n.Expr, ...], b: tuple[n.Expr, ...]) -> bool:
    """Whether some index of ``a`` is ``c + k1`` where ``b``'s is ``c + k2``, with
    integer literals ``k1 != k2`` (how a ramp's lanes differ)."""
    for x, y in zip(a, b):
        (base_x, kx), (base_y, ky) = _split(x), _split(y)
        if kx != ky and (base_x is base_y or base_x == base_y):
            return True
    return False


def _split(e: n.Expr) -> tuple[n.Expr | None, int]:
    """``(c, k)`` with ``e`` = ``c + k``, ``k`` the integer literals added at the top."""
    if isinstance(e, n.IntImm):
        return None, e.value
    if isinstance(e, n.Add) and isinstance(e.b, n.IntImm):
        base, k = _split(e.a)
        return base, k + e.b.value
    return e, 0


def write_out_views_and_lanes(func: n.PrimFunc) -> tuple[n.PrimFunc, Written]:
    """``func`` with every view access made one of the memory's owner and every vector
    statement written out lane by lane (see the module docstring), and the rewrite,
    whose ``made`` says what each statement became."""
    rewrite = Written()
    body = rewrite.visit(func.body)
    if body is func.body:
        return func, rewrite
    return n.PrimFunc(func.name, func.params, body, func.attrs, func.ret_dtype), rewrite
