"""Where script text came from, and the errors that point back into it.

A :class:`Source` maps ``ast`` positions to the file the user wrote: the
decorators parse a dedented slice of a real file, so line and column
offsets are added back before a :class:`~polypad.errors.ParseError` or a
:class:`~polypad.ir.nodes.Span` is made.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..errors import ParseError
from ..ir import dtypes
from ..ir.nodes import Span

# Friendly names for the statements and expressions the front end refuses.
_DESCRIPTIONS = {
    "While": "a while loop", "Return": "a return statement", "Break": "break",
    "Continue": "continue", "Import": "an import", "ImportFrom": "an import",
    "FunctionDef": "a nested function", "AsyncFunctionDef": "an async function",
    "ClassDef": "a nested class", "Lambda": "a lambda", "Try": "a try statement",
    "Raise": "a raise statement", "Assert": "an assert statement", "Delete": "del",
    "Global": "a global declaration", "Nonlocal": "a nonlocal declaration",
    "ListComp": "a list comprehension", "SetComp": "a set comprehension",
    "DictComp": "a dict comprehension", "GeneratorExp": "a generator expression",
    "IfExp": "a conditional expression", "JoinedStr": "an f-string",
    "Starred": "a starred expression", "Dict": "a dict", "Set": "a set",
    "Await": "await", "Yield": "yield", "YieldFrom": "yield from",
    "NamedExpr": "an assignment expression", "Slice": "a slice",
    "AnnAssign": "an annotated assignment", "Match": "a match statement",
    "AsyncFor": "an async for loop", "AsyncWith": "an async with statement",
}


def describe(node: ast.AST) -> str:
    """A short phrase naming the construct ``node`` is, for error messages."""
    name = type(node).__name__
    return _DESCRIPTIONS.get(name, f"{name} syntax")


@dataclass(frozen=True)
class Source:
    """Script text: file name, the original lines, and the offsets of a slice.

    ``line_offset`` and ``col_offset`` are added to ``ast`` positions (the
    decorators parse a dedented excerpt of a file).
    """

    filename: str
    lines: tuple[str, ...]
    line_offset: int = 0
    col_offset: int = 0

    def position(self, node: ast.AST) -> tuple[int, int]:
        """1-based line and 1-based column of ``node`` in the original file."""
        line = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset + 1
        return line, col

    def error(self, node: ast.AST, message: str) -> ParseError:
        """A ParseError pointing at ``node``."""
        line, col = self.position(node)
        return self.error_at(line, col, message)

    def error_at(self, line: int, col: int, message: str) -> ParseError:
        """A ParseError at a 1-based line and column of the original file."""
        k = line - self.line_offset - 1
        text = self.lines[k] if 0 <= k < len(self.lines) else ""
        return ParseError(message, self.filename, line, col, text)

    def span(self, node: ast.AST) -> Span:
        """The Span of ``node`` (1-based line, 0-based column, as Span says)."""
        line, col = self.position(node)
        return Span(self.filename, line, col - 1)


def t_attr(node: ast.AST) -> str | None:
    """``"serial"`` for the node ``T.serial``; None for anything else."""
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id == "T"):
        return node.attr
    return None


#: TVM 0.27's names for the block dialect's statements (``tirx``, ``s_tir=True``),
#: read as the older ``tir`` names they rename; ``T.alloc_local`` and ``T.alloc_shared``
#: are also accepted, as allocations in the ``"local"`` and ``"shared"`` scopes.
RENAMES = {"T.sblock": "T.block", "T.sblock_alloc_buffer": "T.alloc_buffer",
           "T.sblock_attr": "T.block_attr"}


def call_name(node: ast.AST) -> str | None:
    """``"T.serial"`` for a call of ``T.serial``, ``"range"`` for ``range(...)``.

    TVM 0.27's renames (:data:`RENAMES`) give the older name: ``T.sblock`` is
    ``"T.block"``.
    """
    if not isinstance(node, ast.Call):
        return None
    attr = t_attr(node.func)
    if attr is not None:
        return RENAMES.get("T." + attr, "T." + attr)
    inner = node.func.value if isinstance(node.func, ast.Attribute) else None
    if inner is not None and t_attr(inner) is not None:
        return f"T.{inner.attr}.{node.func.attr}"  # T.axis.spatial: named, to refuse clearly
    if isinstance(node.func, ast.Name):
        return node.func.id
    return None


def symbolic_declaration(node: ast.AST) -> str | None:
    """``"int32"`` for ``T.int32()`` (TVM's declaration of a symbolic variable), else None.

    ``T.bool()`` declares a symbolic bool the same way.
    """
    if (isinstance(node, ast.Call) and not node.args and not node.keywords
            and (dtypes.is_int(t_attr(node.func) or "") or t_attr(node.func) == "bool")):
        return t_attr(node.func)
    return None


def symbolic_targets(node: ast.stmt) -> list[tuple[ast.Name, str]] | None:
    """``[(n, "int32")]`` for ``n = T.int32()``, two pairs for ``n, m = T.int32(),
    T.int32()`` (TVM 0.27's spelling); None for any other statement."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return None
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Name):
        dtype = symbolic_declaration(value)
        return None if dtype is None else [(target, dtype)]
    if (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
            and all(isinstance(t, ast.Name) for t in target.elts)):
        dtypes_ = [symbolic_declaration(v) for v in value.elts]
        if all(d is not None for d in dtypes_):
            return list(zip(target.elts, dtypes_, strict=True))
    return None


def bind_args(src: Source, node: ast.Call, fname: str, names: tuple[str, ...],
              required: int) -> list[ast.expr | None]:
    """Match a call's arguments to ``names`` (the first ``required`` mandatory).

    Returns one entry per name: the argument's node, or None when omitted.
    """
    for a in node.args:
        if isinstance(a, ast.Starred):
            raise src.error(a, f"{fname} does not take *arguments")
    if len(node.args) > len(names):
        raise src.error(node, f"{fname} takes at most {len(names)} positional "
                              f"argument{'s' if len(names) != 1 else ''}, "
                              f"got {len(node.args)}")
    bound = dict(zip(names, node.args, strict=False))
    for kw in node.keywords:
        if kw.arg is None:
            raise src.error(kw, f"{fname} does not take **arguments")
        if kw.arg not in names:
            raise src.error(kw, f"{fname} has no argument {kw.arg!r}")
        if kw.arg in bound:
            raise src.error(kw, f"{fname} got argument {kw.arg!r} twice")
        bound[kw.arg] = kw.value
    for name in names[:required]:
        if name not in bound:
            raise src.error(node, f"{fname} needs the argument {name!r}")
    return [bound.get(n) for n in names]


def string_arg(src: Source, node: ast.expr, what: str) -> str:
    """The value of a string literal, or a ParseError naming ``what``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise src.error(node, f"{what} must be a string literal")


def dtype_arg(src: Source, node: ast.expr, *, value: bool = False) -> str:
    """A dtype string literal such as ``"float32"``, validated.

    ``value`` also admits the dtypes of values that are not buffer elements:
    vectors (``"float32x4"``) and ``"handle"``.
    """
    dtype = string_arg(src, node, "a dtype")
    if value and (dtypes.is_vector(dtype) or dtypes.is_handle(dtype)):
        return dtype
    check_dtype(src, node, dtype)
    return dtype


def check_dtype(src: Source, node: ast.AST, dtype: str) -> None:
    """Refuse dtypes the IR does not know, and vector lanes (``float32x4``) for what
    holds scalars only: a buffer's elements, a parameter."""
    if dtypes.is_valid(dtype):
        return
    if dtypes.is_vector(dtype):
        raise src.error(node, f"vector dtype {dtype!r} is not supported here: a buffer "
                              "element or parameter is a scalar (vectors are values, made "
                              "by T.Ramp, T.Broadcast and vector loads)")
    raise src.error(node, f"unknown dtype {dtype!r}")
