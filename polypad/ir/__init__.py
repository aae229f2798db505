"""The polypad IR: immutable nodes, builders, traversal, equality, verification."""

# First: operators puts Python's operators on the expressions and block_header gives
# Block its header fitting (polypad/ir/nodes.py), so every node made has them.
from . import block_header, dtypes, intrinsics, operators  # noqa: F401  (block_header)
from .nodes import (
    Add,
    Allocate,
    And,
    BinaryOp,
    Block,
    BoolImm,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Compare,
    Div,
    Eq,
    Evaluate,
    Expr,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    Ge,
    Gt,
    IfThenElse,
    IntImm,
    IRModule,
    Le,
    Let,
    LetStmt,
    Lt,
    Max,
    Min,
    Mul,
    Ne,
    Not,
    Or,
    PrimFunc,
    Select,
    SeqStmt,
    Span,
    Stmt,
    Sub,
    Var,
)
from .operators import as_expr, cast, const
from .visitor import Rewriter, Visitor, children, walk

__all__ = [
    "Add", "Allocate", "And", "BinaryOp", "Block", "BoolImm", "Buffer", "BufferLoad",
    "BufferStore", "Call", "Cast", "Compare", "Div", "Eq", "Evaluate", "Expr", "FloatImm",
    "FloorDiv", "FloorMod", "For", "ForKind", "Ge", "Gt", "IfThenElse", "IntImm", "IRModule",
    "Le", "Let", "LetStmt", "Lt", "Max", "Min", "Mul", "Ne", "Not", "Or", "PrimFunc",
    "Select", "SeqStmt", "Span", "Stmt", "Sub", "Var", "Rewriter", "Visitor", "children",
    "walk", "as_expr", "cast", "const", "dtypes", "intrinsics", "operators",
]
