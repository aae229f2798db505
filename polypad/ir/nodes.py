"""The polypad IR grammar: every node of the tree, and nothing else.

Nodes are frozen, slotted dataclasses.  Their generated ``__eq__`` and
``__hash__`` are *exact* structural equality: two trees are equal when they
have the same shape and use the very same variables and buffers.  Variables
and buffers are identities (``eq=False``), so two loops that happen to name
their counter ``i`` do not share it.  Alpha-equivalence, which maps bound
variables onto each other, is :func:`polypad.ir.structural.structural_equal`.

Arithmetic and ordering operators on expressions build IR (see
:mod:`polypad.ir.operators`); ``==`` stays exact equality so that nodes work
as dictionary keys.  Use ``a.equal(b)`` or ``T.eq`` to build ``a == b``.

Helpers, printing and traversal live in sibling modules.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from polypad.errors import DTypeError, NotFoundError, VerifyError

from .deep import guard_generated_methods
from .operators import ExprOps

_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64,
             "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}

# ---------------------------------------------------------------- locations


@dataclass(frozen=True, slots=True)
class Span:
    """A place in source text: file name, 1-based line, 0-based column."""

    filename: str
    line: int
    column: int


# ---------------------------------------------------------------- expressions


def _derived():
    """A dtype taken from an operand when the node is made: not an argument, not
    compared, and O(1) to read however long the chain below (``a + b + c + ...``)."""
    return field(init=False, repr=False, compare=False)


def _derive_dtype(node, operand) -> None:
    # An operand without a dtype (not an Expr) leaves the slot unset, so reading
    # ``node.dtype`` fails as it would have on the operand.
    dtype = getattr(operand, "dtype", None)
    if dtype is not None:
        object.__setattr__(node, "dtype", dtype)


@dataclass(frozen=True, slots=True)
class Expr(ExprOps):
    """Base of every expression.  ``dtype`` is a string such as ``"int32"``."""


@dataclass(frozen=True, slots=True, eq=False)
class Var(Expr):
    """A variable: loop counter, let binding or scalar parameter (an identity)."""

    name: str
    dtype: str = "int32"

    # Identity, not the (empty) field tuple that Expr's generated __eq__ compares.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"Var({self.name}:{self.dtype})"


@dataclass(frozen=True, slots=True)
class IntImm(Expr):
    """An integer constant; its value must be one of ``dtype``'s (no silent wrap)."""

    value: int
    dtype: str = "int32"

    def __post_init__(self) -> None:
        bits = _INT_BITS.get(self.dtype)
        if bits is None:
            return  # the verifier reports a non-integer dtype
        lo, hi = (0, 2**bits - 1) if self.dtype[0] == "u" else (-(2 ** (bits - 1)),
                                                                 2 ** (bits - 1) - 1)
        if not lo <= self.value <= hi:
            raise DTypeError(f"{self.value} is outside the range of {self.dtype} "
                             f"[{lo}, {hi}]; write it as a wider constant, e.g. "
                             f"T.int64({self.value})")


@dataclass(frozen=True, slots=True)
class FloatImm(Expr):
    value: float
    dtype: str = "float32"


@dataclass(frozen=True, slots=True)
class BoolImm(Expr):
    value: bool

    @property
    def dtype(self) -> str:
        return "bool"


@dataclass(frozen=True, slots=True)
class BinaryOp(Expr):
    """Arithmetic on two operands of one dtype; the result has that dtype."""

    a: Expr
    b: Expr
    dtype: str = _derived()

    def __post_init__(self) -> None:
        _derive_dtype(self, self.a)


class Add(BinaryOp):
    __slots__ = ()


class Sub(BinaryOp):
    __slots__ = ()


class Mul(BinaryOp):
    __slots__ = ()


class Div(BinaryOp):
    """True division; floats only."""

    __slots__ = ()


class FloorDiv(BinaryOp):
    """Floor division: rounds toward negative infinity, like Python's ``//``."""

    __slots__ = ()


class FloorMod(BinaryOp):
    """Floor modulo: the result has the sign of the divisor, like Python's ``%``."""

    __slots__ = ()


class Min(BinaryOp):
    __slots__ = ()


class Max(BinaryOp):
    __slots__ = ()


def _bool_like(node, operand) -> None:
    """Set ``node.dtype``: ``bool``, or ``boolx4`` for an operand with four lanes.

    Stored when the node is made, so that reading it is O(1) however long a
    chain of ``and`` below it."""
    dtype = getattr(operand, "dtype", None)
    if dtype is not None:
        object.__setattr__(node, "dtype", "bool" if "x" not in dtype
                           else "boolx" + dtype.partition("x")[2])


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    """A comparison of two operands of one dtype; the result is ``bool`` (one per lane)."""

    a: Expr
    b: Expr
    dtype: str = _derived()

    def __post_init__(self) -> None:
        _bool_like(self, self.a)

    def __bool__(self) -> bool:
        raise TypeError(
            "a polypad comparison has no Python truth value; "
            "combine conditions with T.And / T.Or (or `and`/`or` in script text)"
        )


class Eq(Compare):
    __slots__ = ()


class Ne(Compare):
    __slots__ = ()


class Lt(Compare):
    __slots__ = ()


class Le(Compare):
    __slots__ = ()


class Gt(Compare):
    __slots__ = ()


class Ge(Compare):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class _Logic(Expr):
    """``and`` / ``or`` of two conditions (lane by lane for vectors)."""

    a: Expr
    b: Expr
    dtype: str = _derived()

    def __post_init__(self) -> None:
        _bool_like(self, self.a)


class And(_Logic):
    __slots__ = ()


class Or(_Logic):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Not(Expr):
    a: Expr
    dtype: str = _derived()

    def __post_init__(self) -> None:
        _bool_like(self, self.a)


@dataclass(frozen=True, slots=True)
class Select(Expr):
    """``T.if_then_else(condition, true_value, false_value)``."""

    condition: Expr
    true_value: Expr
    false_value: Expr
    dtype: str = _derived()

    def __post_init__(self) -> None:
        _derive_dtype(self, self.true_value)


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    dtype: str
    value: Expr


@dataclass(frozen=True, slots=True)
class BufferLoad(Expr):
    """``A[i, j]``; an index with lanes (``T.Ramp``) loads that many elements."""

    buffer: Buffer
    indices: tuple[Expr, ...]

    @property
    def dtype(self) -> str:
        for index in self.indices:
            if "x" in index.dtype:  # a vector index: a vector of elements
                return f"{self.buffer.dtype}x{index.dtype.partition('x')[2]}"
        return self.buffer.dtype


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """An intrinsic: ``assume``, ``undef``, ``likely`` or a math function."""

    op: str
    args: tuple[Expr, ...]
    dtype: str


@dataclass(frozen=True, slots=True)
class Let(Expr):
    """``var`` bound to ``value`` inside ``body``."""

    var: Var
    value: Expr
    body: Expr
    dtype: str = _derived()

    def __post_init__(self) -> None:
        _derive_dtype(self, self.body)


# ---------------------------------------------------------------- statements


class ForKind(enum.Enum):
    """How a loop runs.  The thread kinds are TVM's GPU thread axes
    (``T.thread_binding(n, thread="threadIdx.x")``; the value is the thread
    tag): kept for the printer, run as serial loops on the CPU."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLL = "unroll"
    BLOCK_IDX_X = "blockIdx.x"
    BLOCK_IDX_Y = "blockIdx.y"
    BLOCK_IDX_Z = "blockIdx.z"
    THREAD_IDX_X = "threadIdx.x"
    THREAD_IDX_Y = "threadIdx.y"
    THREAD_IDX_Z = "threadIdx.z"
    VTHREAD = "vthread"
    VTHREAD_X = "vthread.x"
    VTHREAD_Y = "vthread.y"
    VTHREAD_Z = "vthread.z"


@dataclass(frozen=True, slots=True)
class Stmt:
    """Base of every statement.  ``span`` is ignored by equality."""

    span: Span | None = field(default=None, compare=False, kw_only=True, repr=False)

    def __post_init__(self) -> None:
        # Children are checked as the statement is made, so that a rewriter that
        # returns None for a child it removed fails there, not in a later pass.
        # Statements are few beside expressions, so this costs little.
        problems = _field_problems(self)
        if problems:
            raise VerifyError("ill-formed IR: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """``for var in range(min, min + extent)``, run as ``kind`` says."""

    var: Var
    min: Expr
    extent: Expr
    kind: ForKind
    body: Stmt


@dataclass(frozen=True, slots=True)
class IfThenElse(Stmt):
    condition: Expr
    then_case: Stmt
    else_case: Stmt | None = None


@dataclass(frozen=True, slots=True)
class BufferStore(Stmt):
    """``A[i] = value``; with a vector index (``A[b:b + 4] = v``) one element per lane."""

    buffer: Buffer
    value: Expr
    indices: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class SeqStmt(Stmt):
    stmts: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True)
class LetStmt(Stmt):
    var: Var
    value: Expr
    body: Stmt


@dataclass(frozen=True, slots=True)
class Evaluate(Stmt):
    """An expression evaluated for its effect; carries ``T.assume``."""

    value: Expr


@dataclass(frozen=True, slots=True)
class Block(Stmt):
    """``with T.block(name):`` — a named region that schedules address.

    ``header`` records TVM's block structure for the printer
    (:mod:`.nodes_block`); a block made with a new body keeps only the part
    that still fits it (:func:`polypad.ir.block_header.fit`).
    """

    name: str
    body: Stmt
    header: BlockHeader | None = None

    def __post_init__(self) -> None:
        Stmt.__post_init__(self)  # the children's grammar first: the header reads the body
        if self.header is not None:
            object.__setattr__(self, "header", _fit_header(self.body, self.header))


@dataclass(frozen=True, slots=True)
class Allocate(Stmt):
    """``buffer`` is allocated for the duration of ``body`` and freed after."""

    buffer: Buffer
    body: Stmt


# ---------------------------------------------------------------- top level


@dataclass(frozen=True, slots=True)
class Padding:
    """The elements of a buffer that hold no logical data (RFC 0077: "The Buffer object
    stores a predicate to identify which indices contain padding"): those where
    ``predicate``, over ``axes`` (one variable per axis), holds.
    """

    axes: tuple[Var, ...]
    predicate: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Buffer:
    """A multi-dimensional array (an identity).

    ``shape`` holds ints or scalar-parameter ``Var``s.  ``axis_separators``
    lists the logical axes that start a new physical axis (RFC 0039).
    ``padding``, recorded by ``transform_layout``, says which elements are
    padding; it is not part of the script text (printing and parsing drop
    it) nor of structural equality.

    ``data`` says whose memory a buffer declared by :class:`DeclBuffer` has:
    another buffer's (a *view*: element ``k``, row-major, is element
    ``elem_offset + k`` of that buffer's memory, row-major over its shape), a
    pointer expression polypad does not follow (a ``handle``), or, None, no
    memory it knows of.  Parameters and allocations own their memory (None,
    offset 0).  A view's shape may name let variables in scope.

    ``tvm_attrs`` keeps TVM's layout keywords that change nothing in
    polypad's dense buffer (``offset_factor=1``, ``align=64``,
    ``buffer_type=""``), as written, so that the buffer prints back as TVM had it.
    """

    name: str
    shape: tuple[int | Var, ...]
    dtype: str = "float32"
    axis_separators: tuple[int, ...] = ()
    scope: str = "global"
    padding: Padding | None = None
    data: Buffer | Expr | None = None
    elem_offset: Expr | None = None
    tvm_attrs: tuple[tuple[str, object], ...] = ()

    def __getitem__(self, indices) -> BufferLoad:
        from .operators import as_expr

        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, tuple(as_expr(i, "int32") for i in indices))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        dims = ", ".join(str(s.name if isinstance(s, Var) else s) for s in self.shape)
        return f"Buffer({self.name}[{dims}]:{self.dtype})"


@dataclass(frozen=True, slots=True)
class PrimFunc:
    """A function: ordered parameters (``Buffer`` or scalar ``Var``) and a body.

    ``ret_dtype`` is the dtype a ``return`` gives (``-> T.int32``), None for
    a function that returns nothing (every kernel).  Attribute values are
    literals, tuples (lists) and :mod:`.attr_values`."""

    name: str
    params: tuple[Buffer | Var, ...]
    body: Stmt
    attrs: tuple[tuple[str, object], ...] = ()
    ret_dtype: str | None = None

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the highlighted script (:mod:`polypad.viz`, imported here)."""
        from polypad.viz.display import primfunc_html

        return primfunc_html(self)


@dataclass(frozen=True, slots=True)
class IRModule:
    """Named functions, in definition order."""

    name: str
    funcs: tuple[PrimFunc, ...]

    def __getitem__(self, name: str) -> PrimFunc:
        for f in self.funcs:
            if f.name == name:
                return f
        names = ", ".join(f.name for f in self.funcs)
        raise NotFoundError(f"no function {name!r} in module {self.name!r}; functions: {names}")

    def __contains__(self, name: str) -> bool:
        return any(f.name == name for f in self.funcs)

    @property
    def functions(self) -> dict[str, PrimFunc]:
        return {f.name: f for f in self.funcs}


# The constructs of TVM's lowered text (vectors, views, opaque statements): a grammar
# of their own, imported here so that ``nodes.Ramp`` names them as every node.
from .nodes_tvm import (  # noqa: E402, F401
    NO_DATA,
    Assert,
    AttrStmt,
    Broadcast,
    BufferData,
    DeclBuffer,
    Ramp,
    Return,
    StringImm,
)

# Generated equality, hashing and repr recurse: run them on a deep worker too.
guard_generated_methods(Expr, Stmt, PrimFunc, IRModule, skip=(Var,))

from .block_header import fit as _fit_header  # noqa: E402, I001  (it reads the nodes above)
from .nodes_block import BlockAxis, BlockHeader, BufferRegion  # noqa: E402, F401

# Imported last: it reads the annotations of the classes above.
from .field_types import field_problems as _field_problems  # noqa: E402, I001
