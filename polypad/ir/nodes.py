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

The grammar is written in four modules, each importing only those before
it: :mod:`.nodes_expr` (expressions and buffers), :mod:`.nodes_block` (a
block's header), :mod:`.nodes_stmt` (statements and functions) and
:mod:`.nodes_tvm` (what TVM's lowering prints beyond that).  This module
names them all, so that ``nodes.Ramp`` names a node as ``nodes.For`` does.
Helpers, printing and traversal live in sibling modules.
"""

from __future__ import annotations

from .deep_worker import guard_generated_methods
from .nodes_block import BlockAxis, BlockHeader, BufferRegion
from .nodes_expr import (
    Add,
    And,
    BinaryOp,
    BoolImm,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    Compare,
    Div,
    Eq,
    Expr,
    FloatImm,
    FloorDiv,
    FloorMod,
    Ge,
    Gt,
    IntImm,
    Le,
    Let,
    Lt,
    Max,
    Min,
    Mul,
    Ne,
    Not,
    Or,
    Padding,
    Select,
    Sub,
    Var,
)
from .nodes_stmt import (
    Allocate,
    Block,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IRModule,
    LetStmt,
    PrimFunc,
    SeqStmt,
    Span,
    Stmt,
)
from .nodes_tvm import (
    NO_DATA,
    Assert,
    AttrStmt,
    Broadcast,
    BufferData,
    CommReducer,
    DeclBuffer,
    Ramp,
    Return,
    StringImm,
    ThreadAllReduce,
)

__all__ = [
    "Add", "Allocate", "And", "Assert", "AttrStmt", "BinaryOp", "Block", "BlockAxis",
    "BlockHeader", "BoolImm", "Broadcast", "Buffer", "BufferData", "BufferLoad",
    "BufferRegion", "BufferStore", "Call", "Cast", "CommReducer", "Compare", "DeclBuffer",
    "Div", "Eq",
    "Evaluate", "Expr", "FloatImm", "FloorDiv", "FloorMod", "For", "ForKind", "Ge", "Gt",
    "IRModule", "IfThenElse", "IntImm", "Le", "Let", "LetStmt", "Lt", "Max", "Min", "Mul",
    "NO_DATA", "Ne", "Not", "Or", "Padding", "PrimFunc", "Ramp", "Return", "Select",
    "SeqStmt", "Span", "Stmt", "StringImm", "Sub", "ThreadAllReduce", "Var",
]

# Generated equality, hashing and repr recurse: run them on a deep worker too.  Every
# node class is defined by now, TVM's included.
guard_generated_methods(Expr, Stmt, PrimFunc, IRModule, skip=(Var,))
