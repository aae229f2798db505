"""The grammar of what TVM's lowering prints beyond loops and stores.

A cross-thread reduction (:class:`ThreadAllReduce`, with its
:class:`CommReducer`), vectors (``T.Ramp``, ``T.Broadcast``; a vector store is a ``BufferStore``
with a ``Ramp`` index), buffer views (:class:`DeclBuffer` of a buffer whose
``data`` is another buffer), and the statements of a packed function that
polypad keeps, prints and declines to run or analyse: attributes, asserts,
``return``, and the string and pointer values their intrinsics take.  Opaque
intrinsics (``T.tvm_struct_get``, ``T.call_extern``, tensor-core fragments)
are :class:`~polypad.ir.nodes.Call` nodes; :mod:`.opaque` lists them.

Named, with every other node, by :mod:`.nodes`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nodes_expr import Buffer, Expr, Var, _derived
from .nodes_stmt import Stmt


@dataclass(frozen=True, slots=True)
class Ramp(Expr):
    """``T.Ramp(base, stride, lanes)``: the vector ``base + k * stride``, k < lanes."""

    base: Expr
    stride: Expr
    lanes: int
    dtype: str = _derived()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", f"{self.base.dtype}x{self.lanes}")


@dataclass(frozen=True, slots=True)
class Broadcast(Expr):
    """``T.Broadcast(value, lanes)``: ``value`` in every lane."""

    value: Expr
    lanes: int
    dtype: str = _derived()

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", f"{self.value.dtype}x{self.lanes}")


@dataclass(frozen=True, slots=True)
class StringImm(Expr):
    """A string argument of an intrinsic or attribute (``"int32"``, a symbol name)."""

    value: str

    @property
    def dtype(self) -> str:
        return "handle"


@dataclass(frozen=True, slots=True)
class BufferData(Expr):
    """``A.data``: the pointer to a buffer's memory, as opaque intrinsics take it."""

    buffer: Buffer

    @property
    def dtype(self) -> str:
        return "handle"


@dataclass(frozen=True, slots=True)
class DeclBuffer(Stmt):
    """``buffer`` is declared for ``body`` over memory it does not own (``buffer.data``):
    ``B = A.view(64)``, ``B = T.decl_buffer(shape, data=A.data)``, or a packed
    function's ``A = T.decl_buffer(shape, data=T.reinterpret(...))``."""

    buffer: Buffer
    body: Stmt


@dataclass(frozen=True, slots=True)
class AttrStmt(Stmt):
    """``with T.attr(node, key, value):`` -- an annotation polypad keeps but does not
    interpret.  ``node`` is a buffer, an expression (``0`` for TVM's dict form
    ``T.attr({key: value})``), a tuple of them, or an attribute value such as
    ``T.target("cuda")``."""

    node: object
    key: str
    value: Expr
    body: Stmt


@dataclass(frozen=True, slots=True)
class Assert(Stmt):
    """``assert condition, message`` of a packed function; ``message`` is its source
    text (TVM's error kind and parts), kept for printing only."""

    condition: Expr
    message: str


@dataclass(frozen=True, slots=True)
class Return(Stmt):
    """``return value``: a packed function's status code."""

    value: Expr


@dataclass(frozen=True, slots=True)
class CommReducer:
    """``T.comm_reducer(lambda x0, x1, y0, y1: (r0, r1), [id0, id1])``: how two partial
    results ``(x0, x1)`` and ``(y0, y1)`` combine into ``(r0, r1)``, and the identity.

    A closed term: ``lhs`` and ``rhs`` are bound here and nowhere else, so walkers do
    not look inside (it is no :class:`Expr`) and structural equality maps them."""

    lhs: tuple[Var, ...]
    rhs: tuple[Var, ...]
    results: tuple[Expr, ...]
    identities: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class ThreadAllReduce(Stmt):
    """A block-level cross-thread reduction, TVM's lowered form::

        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", 0):
            T.tvm_thread_allreduce(T.uint32(1), value, cond, red[0], tx)

    Every thread of the group (the threads that differ only in ``threads``) offers
    ``values`` where ``condition`` holds, and every one of them then finds the
    combination of all offers, by ``reducer``, in ``targets`` (the elements its
    results are stored to, one per value).  ``scope`` is the attribute's value,
    kept for printing.  :mod:`polypad.semantics.lower_allreduce` says what it means
    in loops and stores."""

    reducer: CommReducer
    values: tuple[Expr, ...]
    condition: Expr
    targets: tuple[Expr, ...]
    threads: tuple[Var, ...]
    scope: Expr


#: The ``data`` of a buffer declared over no memory polypad knows: a body's
#: ``A = T.Buffer((16,), "float32")``, to which TVM gives a fresh pointer that
#: nothing allocates (a packed function then binds it with ``T.attr``).
NO_DATA = StringImm("")
