"""``@prim_func`` and ``@ir_module``: parse a Python definition's source text.

The decorated function is never called and its module is never re-run:
the decorator reads the definition's text with :func:`inspect.getsource`
and parses it, so an error points at the user's file, line and column.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap

from ..arguments import wrong_type as _wrong_type
from ..errors import ParseError
from .parser import Parser, ast_parse
from .source import Source


def prim_func(fn=None, *, private: bool = False, check_well_formed: bool = True,
              s_tir: bool = False):
    """Parse the decorated function's source into a PrimFunc.

    ``@prim_func(private=True)``, ``check_well_formed=False`` and TVM 0.27's
    ``s_tir=True`` are TVM's arguments: accepted, and ignored (they steer TVM
    only).

    >>> @prim_func
    ... def f(A: T.Buffer((4,), "float32")):
    ...     for i in T.serial(4):
    ...         A[i] = 0.0
    """
    if fn is None:
        return prim_func
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        raise _wrong_type(fn, "fn", "prim_func", "a function (def)")
    node, parser = _parse_definition(fn, ast.FunctionDef)
    return parser.function(node, check_decorators=False)


def ir_module(cls=None, *, check_well_formed: bool = True):
    """Parse the decorated class's source into an IRModule named after the class.

    ``@ir_module(check_well_formed=False)`` is accepted and ignored, as in TVM.
    """
    if cls is None:
        return ir_module
    if not inspect.isclass(cls):
        raise _wrong_type(cls, "cls", "ir_module", "a class")
    try:
        node, parser = _parse_definition(cls, ast.ClassDef)
    except ParseError:
        # inspect finds a class through sys.modules, which a module loaded by
        # hand (importlib.util.module_from_spec) is not in; the frame that
        # applies the decorator still knows the file and line.
        found = _class_in_caller(cls, sys._getframe(1))
        if found is None:
            raise
        node, parser = found
    return parser.module(node, check_decorators=False)


def _parse_definition(obj, kind: type):
    what = "function" if kind is ast.FunctionDef else "class"
    try:
        lines, start = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or inspect.getfile(obj)
    except (OSError, TypeError, KeyError) as e:
        # KeyError: importing TVM replaces inspect.getfile with one that looks a
        # class's module up in sys.modules, where a module loaded by hand is not.
        raise ParseError(f"cannot read the source of the {what} "
                         f"{getattr(obj, '__name__', obj)!r}: {e}") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    src = Source(filename, tuple(line.rstrip("\r\n") for line in lines),
                 line_offset=start - 1, col_offset=_removed_indent(text, dedented))
    tree = ast_parse(dedented, src)
    node = tree.body[0] if tree.body else None
    if not isinstance(node, kind):
        raise src.error_at(start, 1, f"expected a {what} definition")
    return node, Parser(src)


def _class_in_caller(cls, frame) -> tuple[ast.ClassDef, Parser] | None:
    """The definition of ``cls`` in the file of ``frame``, around its current line."""
    filename = frame.f_code.co_filename
    lines = linecache.getlines(filename)
    if not lines:
        return None
    src = Source(filename, tuple(line.rstrip("\r\n") for line in lines))
    here = frame.f_lineno
    for node in ast.walk(ast_parse("".join(lines), src)):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first <= here <= node.end_lineno:
                return node, Parser(src)
    return None


def _removed_indent(text: str, dedented: str) -> int:
    """How many columns ``textwrap.dedent`` took off every line."""
    for before, after in zip(text.splitlines(), dedented.splitlines(), strict=False):
        if before.strip():
            return len(before) - len(after)
    return 0
