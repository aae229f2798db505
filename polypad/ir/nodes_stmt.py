"""The grammar of statements and functions.

Every statement node, :class:`PrimFunc` and :class:`IRModule`; the
expressions and buffers are in :mod:`.nodes_expr`, and :mod:`.nodes` names
them all.  A statement checks its fields as it is made
(:mod:`.field_types`), and a block keeps the part of its header that fits
its body: that reading of bodies is :func:`polypad.ir.block_header.fit`,
above the grammar, which puts itself here (:func:`fit_headers_with`) when it
is imported -- ``polypad/ir/__init__.py`` imports it first.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from polypad.errors import NotFoundError, VerifyError

from .field_types import field_problems
from .nodes_block import BlockHeader
from .nodes_expr import Buffer, Expr, Var

# ---------------------------------------------------------------- locations


@dataclass(frozen=True, slots=True)
class Span:
    """A place in source text: file name, 1-based line, 0-based column."""

    filename: str
    line: int
    column: int


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
        problems = field_problems(self)
        if problems:
            raise VerifyError("ill-formed IR: " + "; ".join(problems))


@dataclass(frozen=True, slots=True)
class For(Stmt):
    """``for var in range(min, min + extent)``, run as ``kind`` says.

    ``launched`` marks a thread loop written ``T.launch_thread`` (TVM's lowered GPU
    text, an attribute over a thread axis rather than a loop): it means the same
    loop.  ``annotations`` are TVM's hints on the loop (``T.serial(n,
    annotations={"pragma_auto_unroll_max_step": 16})``), an ``AttrMap``, which
    steer TVM's passes only.  Neither is compared; only the printer reads them, to
    write the loop back as TVM did."""

    var: Var
    min: Expr
    extent: Expr
    kind: ForKind
    body: Stmt
    launched: bool = field(default=False, compare=False, kw_only=True)
    annotations: object = field(default=None, compare=False, kw_only=True)


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
    #: As :attr:`.nodes_expr.BufferLoad.view_access`: the store as written through
    #: a view, set by lowering.
    view_access: tuple | None = field(default=None, compare=False, kw_only=True, repr=False)


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
            object.__setattr__(self, "header", _header_fit(self.body, self.header))


@dataclass(frozen=True, slots=True)
class Allocate(Stmt):
    """``buffer`` is allocated for the duration of ``body`` and freed after."""

    buffer: Buffer
    body: Stmt


# ---------------------------------------------------------------- functions


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


# What a block keeps of its header (polypad.ir.block_header.fit, put here when that
# module is imported: it reads bodies with the visitor, above the grammar).
_header_fit: Callable[[Stmt, BlockHeader], BlockHeader | None] | None = None


def fit_headers_with(fit: Callable[[Stmt, BlockHeader], BlockHeader | None]) -> None:
    """Make ``fit(body, header)`` what a :class:`Block` keeps of its header when made."""
    global _header_fit
    _header_fit = fit
