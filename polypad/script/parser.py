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
from .checks import check_blocks
from .parse_alloc import decl_buffer
from .parse_attrs import func_attrs, return_dtype
from .parse_buffer import annotation_buffer, is_buffer_annotation, match_buffer
from .parse_expr import ExprParser, Handle
from .parse_stmt import StmtParser, is_docstring
from .parse_symbolic import Symbolic, handle_annotation, type_var
from .source import Source, call_name, check_dtype, describe, symbolic_targets, t_attr


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


# Decorator keywords accepted (and ignored: they only steer TVM).  TVM 0.27 prints
# s_tir=True on every function (it is written in the structured, block dialect).
_DECORATOR_FLAGS = {"prim_func": ("private", "check_well_formed", "s_tir"),
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
        self.type_vars: dict[str, Var] = {}  # module-level n = TypeVar("n")

    def toplevel(self, tree: ast.Module) -> PrimFunc | IRModule:
        """A whole file: imports and docstrings are skipped, the rest must be IR.

        ``n = TypeVar("n")`` before the functions (TVM 0.27's module-level
        declaration of an int64 symbolic size) is read as that variable.
        """
        funcs: list[ast.FunctionDef] = []
        classes: list[ast.ClassDef] = []
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) or is_docstring(node):
                continue
            found = type_var(self.src, node)
            if found is not None:
                self.type_vars[found.name] = found
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
        ret_dtype = return_dtype(self.src, node.returns)
        symbolic = Symbolic(self.src, node, self.type_vars)
        env = self._params(args.args, symbolic)
        body_nodes, attrs, matched = self._header(node.body, args.args, env, symbolic)
        self.stmts.unnamed = 0
        self.stmts.declared = []
        self.stmts.axes = []
        self.stmts.symbolic = symbolic
        body = self.stmts.body(body_nodes, env)
        # A handle no T.match_buffer matches stays a pointer (a packed function's
        # `args: T.handle`), a parameter polypad passes on but does not follow.
        params = tuple(matched.get(a.arg) or env[a.arg].pointer()
                       if isinstance(env[a.arg], Handle) else env[a.arg] for a in args.args)
        # After the body: the model checks the blocks' axes, then their regions.  A
        # parameter buffer's symbolic size is never negative (the caller's array gives it).
        sizes = tuple(dict.fromkeys(x for b in params if isinstance(b, Buffer)
                                    for x in b.shape if isinstance(x, Var)))
        check_blocks(self.src, body, self.stmts.axes, self.stmts.declared, sizes)
        # Symbolic sizes (`n = T.int32()`, a quoted "n" in a shape) become trailing
        # scalar parameters: a kernel takes each as an argument, checked against the
        # shapes of the arrays passed.
        return PrimFunc(node.name, params + symbolic.parameters(params, body), body,
                        tuple(attrs), ret_dtype)

    def _params(self, args: list[ast.arg], symbolic: Symbolic) -> dict:
        # Scalars first, so that buffer shapes may name any scalar parameter.
        env: dict = dict(symbolic.outer)
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
            if attr == "handle" or handle_annotation(ann):  # T.handle, T.handle("float32")
                env[a.arg] = Handle(a.arg)
            elif attr is not None:
                check_dtype(self.src, ann, attr)
                env[a.arg] = Var(a.arg, attr)
            elif is_buffer_annotation(ann):
                buffers.append(a)
            else:
                raise self.src.error(ann, "unsupported parameter annotation; expected "
                                          "T.Buffer(shape, dtype), T.handle or T.<dtype>")
        symbolic.declare_quoted(env, buffers)
        for a in buffers:
            env[a.arg] = annotation_buffer(self.src, a.annotation, a.arg, env)
        return env

    def _header(self, body: list[ast.stmt], args: list[ast.arg], env: dict,
                symbolic: Symbolic):
        """Read the leading ``T.match_buffer``, ``T.func_attr``, ``n = T.int32()`` and
        ``T.decl_buffer`` of a pointer parameter.

        The header ends at the first other statement, so the statements are
        read, and their errors found, in source order.
        """
        attrs: list = []
        matched: dict[str, Buffer] = {}
        handles = [a for a in args if isinstance(env[a.arg], Handle)]

        def match(node: ast.Assign, env: dict) -> Buffer:
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise self.src.error(node, "T.match_buffer must be assigned to one name")
            handle_node, buffer = match_buffer(self.src, node.value, node.targets[0].id, env)
            handle = self._handle(node.value, handle_node, handles, matched, env)
            matched[handle] = buffer
            env[handle].matched = True
            return buffer

        rest: list[ast.stmt] = []
        for k, node in enumerate(body):
            targets = symbolic_targets(node)
            if targets is not None:
                for name, dtype in targets:
                    symbolic.declare(name, dtype, env)
            elif is_docstring(node):
                continue
            elif (isinstance(node, ast.Assign) and call_name(node.value) == "T.match_buffer"):
                buffer = match(node, env)
                env[buffer.name] = buffer
            elif isinstance(node, ast.Expr) and call_name(node.value) == "T.func_attr":
                attrs.extend(func_attrs(self.src, node.value))
            elif self._pointer_buffer(node, env, matched):
                continue
            else:
                rest = body[k:]
                break
        # A T.match_buffer further down the top level (older TVM tests put one after a
        # T.alloc_buffer) matches its parameter where it stands, in source order.
        self.stmts.late_match = (frozenset(id(n) for n in rest), match)
        return rest, attrs, matched

    def _pointer_buffer(self, node: ast.stmt, env: dict, matched: dict) -> bool:
        """``A = T.decl_buffer(shape, dtype, data=a)`` over a pointer parameter ``a``
        (``a: T.handle("float32")``) at the top: read as ``T.match_buffer``."""
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and call_name(node.value) in ("T.decl_buffer", "T.Buffer")):
            return False
        data = next((kw.value for kw in node.value.keywords if kw.arg == "data"), None)
        if data is None and len(node.value.args) >= 3:
            data = node.value.args[2]
        if not (isinstance(data, ast.Name) and isinstance(env.get(data.id), Handle)
                and data.id not in matched):
            return False
        name = node.targets[0].id
        buffer = decl_buffer(self.src, node.value, call_name(node.value), name,
                             {**env, data.id: None}, node, pointer_param=True)
        matched[data.id] = buffer
        env[name] = buffer
        return True

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


