"""The grammar of expressions, and of the buffers they load from.

Every expression node, :class:`Padding` and :class:`Buffer`; the statements
are in :mod:`.nodes_stmt`, and :mod:`.nodes` names them all.  Nothing here
imports the IR above the grammar: Python's operators on expressions (``i +
1``, ``A[i]``) are put on these classes by :mod:`.operators`, where the
builders are (see that module).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.errors import DTypeError

_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64,
             "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}

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
class Expr:
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
    """``T.if_then_else(condition, true_value, false_value)``.

    ``eager`` marks TVM's ``T.Select``, which evaluates both branches: TVM
    requires both to be defined, so it has the value ``T.if_then_else`` has,
    and polypad evaluates it the same way.  Only the printer reads it, so that
    the text prints back as TVM wrote it (TVM's structural equality tells the
    two apart); polypad's does not compare it, the two meaning the same."""

    condition: Expr
    true_value: Expr
    false_value: Expr
    eager: bool = field(default=False, compare=False)
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
    #: Set by lowering (:mod:`polypad.semantics.lower_views`) on an access of a
    #: view's memory: ``(view, indices)``, the access as written, whose indices
    #: every target checks against the view's own shape first.  Not part of
    #: equality; a rewriter's :meth:`~.visitor.Rewriter.generic_visit` keeps it
    #: in step with the indices.
    view_access: tuple | None = field(default=None, compare=False, kw_only=True, repr=False)

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


# ---------------------------------------------------------------- buffers


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
    ``buffer_type=""``), as written, so that the buffer prints back as TVM had it;
    also an allocation's ``annotations`` (an ``AttrMap``, which structural equality
    does not compare) and ``("shape_dtype", "int64")`` where every literal extent
    was written ``T.int64(k)``.
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

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        dims = ", ".join(str(s.name if isinstance(s, Var) else s) for s in self.shape)
        return f"Buffer({self.name}[{dims}]:{self.dtype})"
