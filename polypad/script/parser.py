"""Script text to IR: functions, parameters and modules.

The text is read with :func:`ast.parse` and walked; it is never compiled,
imported or run.  One function gives a :class:`PrimFunc`; several
functions, or a class decorated with ``ir_module``, give an
:class:`IRModule`.  Anything outside the supported subset raises a
:class:`~polypad.errors.ParseError` with the file, line and column.
"""

from __future__ import annotations

import ast
import io
import tokenize

from ..errors import TooDeepError
from ..ir.deep import run_deep
from ..ir.nodes import Buffer, IRModule, PrimFunc, Var
from .block_axes import check_axes
from .block_regions import check_declared
from .parse_buffer import annotation_buffer, is_buffer_annotation, match_buffer
from .parse_expr import ExprParser, Handle
from .parse_stmt import StmtParser, is_docstring
from .source import Source, call_name, check_dtype, describe, symbolic_declaration, t_attr


def parse(text: str, filename: str = "<string>") -> PrimFunc | IRModule:
    """Parse script text into a PrimFunc, or an IRModule when it holds several.

    >>> f = parse('''
    ... @T.prim_func
    ... def f(A: T.Buffer((4,), "float32")):
    ...     for i in T.serial(4):
    ...         A[i] = 0.0
    ... ''')
    >>> f.name, f.params[0].shape
    ('f', (4,))
    """
    from ..arguments import expect
    expect(text, str, "text", "parse")
    expect(filename, str, "filename", "parse")
    text = text.removeprefix("\ufeff")  # a byte order mark, which Python itself accepts
    src = Source(filename, tuple(text.splitlines()))
    return Parser(src).toplevel(ast_parse(text, src))


def ast_parse(text: str, src: Source) -> ast.Module:
    """``ast.parse``, with Python's SyntaxError turned into a located ParseError.

    An expression of thousands of terms (``a + b + c + ...``) is beyond
    Python's parser on an ordinary stack: it is parsed again on a deep worker
    (:mod:`polypad.ir.deep`), and one too deep even there is a ParseError
    at the statement that holds it.
    """
    try:
        try:
            return ast.parse(text)
        except RecursionError:
            return run_deep(ast.parse, text)
    except SyntaxError as e:
        line = (e.lineno or 1) + src.line_offset
        col = (e.offset or 1) + src.col_offset
        raise src.error_at(line, col, f"invalid syntax: {e.msg}") from None
    except TooDeepError:
        line, col, tokens = _longest_statement(text)
        raise src.error_at(line + src.line_offset, col + 1 + src.col_offset,
                           f"this statement ({tokens} tokens) is nested too deeply for "
                           "Python's parser; split it with local variables "
                           "(t = a + b, then t + c ...)") from None


def _longest_statement(text: str) -> tuple[int, int, int]:
    """Line (1-based), column (0-based) and token count of the statement with most tokens."""
    best, start, count = (1, 0, 0), None, 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if start is not None and count > best[2]:
                    best = (*start, count)
                start, count = None, 0
            elif tok.type not in _LAYOUT:
                start = start or tok.start
                count += 1
    except (tokenize.TokenError, SyntaxError):
        pass  # the best found so far
    return best


# Decorator keywords accepted (and ignored: they only steer TVM).
_DECORATOR_FLAGS = {"prim_func": ("private", "check_well_formed"),
                    "ir_module": ("check_well_formed",)}

_LAYOUT = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)


def _decorator_name(node: ast.expr) -> str | None:
    """``prim_func`` for ``@T.prim_func``, ``@pp.prim_func`` or ``@prim_func``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class Parser:
    """Reads functions and modules from one :class:`Source`."""

    def __init__(self, src: Source):
        self.src = src
        self.exprs = ExprParser(src)
        self.stmts = StmtParser(src, self.exprs)

    def toplevel(self, tree: ast.Module) -> PrimFunc | IRModule:
        """A whole file: imports and docstrings are skipped, the rest must be IR."""
        funcs: list[ast.FunctionDef] = []
        classes: list[ast.ClassDef] = []
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) or is_docstring(node):
                continue
            if isinstance(node, ast.FunctionDef):
                funcs.append(node)
            elif isinstance(node, ast.ClassDef):
                classes.append(node)
            else:
                raise self.src.error(node, f"{describe(node)} is not supported at the top "
                                           "level; expected @T.prim_func functions or one "
                                           "@I.ir_module class")
            if classes and (funcs or len(classes) > 1):
                raise self.src.error(node, "a script holds either prim_func functions or "
                                           "one ir_module class, not both")
        if classes:
            return self.module(classes[0])
        if not funcs:
            raise self.src.error_at(1 + self.src.line_offset, 1, "no @T.prim_func function found")
        if len(funcs) == 1:
            return self.function(funcs[0])
        return IRModule("module", self._functions(funcs))

    def module(self, node: ast.ClassDef, check_decorators: bool = True) -> IRModule:
        """An ``@I.ir_module class Name:`` holding prim_func methods."""
        if check_decorators:
            self._check_decorators(node, "ir_module")
        if node.bases or node.keywords:
            raise self.src.error(node, "an ir_module class takes no base classes")
        funcs = []
        for item in node.body:
            if is_docstring(item):
                continue
            if not isinstance(item, ast.FunctionDef):
                raise self.src.error(item, f"{describe(item)} is not supported in an "
                                           "ir_module class; expected @T.prim_func methods")
            funcs.append(item)
        return IRModule(node.name, self._functions(funcs))

    def _functions(self, nodes: list[ast.FunctionDef]) -> tuple[PrimFunc, ...]:
        seen = set()
        for node in nodes:
            if node.name in seen:
                raise self.src.error(node, f"function {node.name!r} is defined twice")
            seen.add(node.name)
        return tuple(self.function(n) for n in nodes)

    def _check_decorators(self, node: ast.FunctionDef | ast.ClassDef, expected: str) -> None:
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            if _decorator_name(call.func if call else dec) != expected:
                raise self.src.error(dec, f"unsupported decorator; expected @T.{expected}"
                                     if expected == "prim_func" else
                                     f"unsupported decorator; expected @I.{expected}")
            if call is not None:
                self._decorator_arguments(call, expected)

    def _decorator_arguments(self, call: ast.Call, expected: str) -> None:
        """``@T.prim_func(private=True)``, ``check_well_formed=False``: read and ignored.

        Both only steer TVM (symbol export, its own well-formedness check);
        polypad's meaning of the function does not depend on them.
        """
        allowed = _DECORATOR_FLAGS[expected]
        if call.args:
            raise self.src.error(call.args[0], f"@{expected}(...) takes keyword arguments only")
        for kw in call.keywords:
            if kw.arg not in allowed:
                raise self.src.error(kw if kw.arg else call,
                                     f"@{expected} has no argument {kw.arg!r}; polypad reads "
                                     f"{', '.join(allowed)}")
            if not (isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool)):
                raise self.src.error(kw.value, f"{kw.arg}= must be True or False")

    # ------------------------------------------------------------ functions

    def function(self, node: ast.FunctionDef, check_decorators: bool = True) -> PrimFunc:
        """A ``@T.prim_func def name(params): body``."""
        if check_decorators:
            self._check_decorators(node, "prim_func")
        args = node.args
        extra = (args.posonlyargs or args.kwonlyargs or args.defaults or args.kw_defaults
                 or args.vararg or args.kwarg)
        if extra:
            raise self.src.error(node, "a prim_func takes plain positional parameters only")
        if node.returns is not None and not (
                isinstance(node.returns, ast.Constant) and node.returns.value is None):
            raise self.src.error(node.returns, "a prim_func returns nothing (-> None)")
        env = self._params(args.args)
        body_nodes, attrs, matched, symbolic = self._header(node.body, args.args, env)
        self.stmts.unnamed = 0
        self.stmts.declared = []
        self.stmts.axes = []
        body = self.stmts.body(body_nodes, env)
        # After the body, axes before regions: a block's axes come before its T.reads.
        check_axes(self.src, body, self.stmts.axes)
        check_declared(self.src, body, self.stmts.declared)
        # After the body, whose statements come first in the file.
        for a in args.args:
            if isinstance(env[a.arg], Handle) and a.arg not in matched:
                raise self.src.error(a, f"handle parameter {a.arg!r} is never matched "
                                        "by T.match_buffer")
        params = tuple(matched[a.arg] if isinstance(env[a.arg], Handle) else env[a.arg]
                       for a in args.args)
        # `n = T.int32()` variables become trailing scalar parameters: a kernel takes
        # each as an argument, checked against the shapes of the arrays passed.
        return PrimFunc(node.name, params + tuple(symbolic), body, tuple(attrs))

    def _params(self, args: list[ast.arg]) -> dict:
        # Scalars first, so that buffer shapes may name any scalar parameter.
        env: dict = {}
        buffers = []
        for a in args:
            if a.arg in env or any(b.arg == a.arg for b in buffers):
                raise self.src.error(a, f"parameter {a.arg!r} appears twice")
            ann = a.annotation
            if ann is None:
                raise self.src.error(a, f"parameter {a.arg!r} needs an annotation: "
                                        "T.Buffer(shape, dtype), T.handle or a dtype "
                                        "such as T.int32")
            attr = t_attr(ann)
            if attr == "handle":
                env[a.arg] = Handle(a.arg)
            elif attr is not None:
                check_dtype(self.src, ann, attr)
                env[a.arg] = Var(a.arg, attr)
            elif is_buffer_annotation(ann):
                buffers.append(a)
            else:
                raise self.src.error(ann, "unsupported parameter annotation; expected "
                                          "T.Buffer(shape, dtype), T.handle or T.<dtype>")
        for a in buffers:
            env[a.arg] = annotation_buffer(self.src, a.annotation, a.arg, env)
        return env

    def _header(self, body: list[ast.stmt], args: list[ast.arg], env: dict):
        """Read the leading ``T.match_buffer``, ``T.func_attr`` and ``n = T.int32()``.

        The header ends at the first other statement, so the statements are
        read, and their errors found, in source order; a ``T.match_buffer``
        after the header is refused where it stands.
        """
        attrs: list = []
        matched: dict[str, Buffer] = {}
        symbolic: list[Var] = []
        handles = [a for a in args if isinstance(env[a.arg], Handle)]
        rest: list[ast.stmt] = []
        for k, node in enumerate(body):
            dtype = (symbolic_declaration(node.value)
                     if isinstance(node, ast.Assign) else None)
            if dtype is not None:
                symbolic.append(self._symbolic(node, dtype, env))
            elif is_docstring(node):
                continue
            elif (isinstance(node, ast.Assign) and call_name(node.value) == "T.match_buffer"):
                if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                    raise self.src.error(node, "T.match_buffer must be assigned to one name")
                name = node.targets[0].id
                handle_node, buffer = match_buffer(self.src, node.value, name, env)
                handle = self._handle(node.value, handle_node, handles, matched, env)
                matched[handle] = buffer
                env[name] = buffer
            elif isinstance(node, ast.Expr) and call_name(node.value) == "T.func_attr":
                attrs.extend(self._func_attr(node.value))
            else:
                rest = body[k:]
                break
        return rest, attrs, matched, symbolic

    def _symbolic(self, node: ast.Assign, dtype: str, env: dict) -> Var:
        """``n = T.int32()``: a symbolic scalar, bound by the shapes that use it."""
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise self.src.error(node, f"T.{dtype}() must be assigned to one name")
        name = node.targets[0].id
        if name in env:
            raise self.src.error(node.targets[0], f"the name {name!r} is already in use here")
        var = Var(name, dtype)
        env[name] = var
        return var

    def _handle(self, call: ast.Call, node: ast.expr | None, handles: list[ast.arg],
                matched: dict, env: dict) -> str:
        if node is None:  # the RFC's T.match_buffer(shape=..., dtype=...): next handle
            free = [a.arg for a in handles if a.arg not in matched]
            if not free:
                raise self.src.error(call, "T.match_buffer has no handle parameter left "
                                           "to match")
            return free[0]
        if not (isinstance(node, ast.Name) and isinstance(env.get(node.id), Handle)):
            raise self.src.error(node, "the first argument of T.match_buffer must be a "
                                       "T.handle parameter")
        if node.id in matched:
            raise self.src.error(node, f"handle {node.id!r} is matched twice")
        return node.id

    def _func_attr(self, call: ast.Call) -> list[tuple[str, object]]:
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Dict):
            raise self.src.error(call, "T.func_attr takes one dict literal")
        out = []
        for k, v in zip(call.args[0].keys, call.args[0].values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise self.src.error(k or call, "a function attribute name must be a string")
            if not (isinstance(v, ast.Constant)
                    and (v.value is None or isinstance(v.value, (str, int, float)))):
                raise self.src.error(v, "a function attribute value must be a literal")
            out.append((k.value, v.value))
        return out

