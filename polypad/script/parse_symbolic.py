"""Symbolic sizes: every way TVM's text declares a variable a shape may use.

- ``n = T.int32()`` (or ``T.int64()``, ``T.bool()``) before the other
  statements, or TVM 0.27's ``n, m = T.int32(), T.int32()``;
- a quoted name in a parameter's shape, ``A: T.Buffer(("n", 64), "float32")``,
  which is how TVM 0.27 declares a size at its first use (the later uses, and
  the body's ``n = T.int32()``, name the same variable);
- ``n = TypeVar("n")`` at the top of the module: an ``int64`` size any
  function may use;
- ``x = T.int32()`` further down a body (older TVM tests), a variable that a
  later block's ``T.match_buffer(..., elem_offset=x)`` binds, or else a
  symbolic size like the others.

Each becomes a trailing scalar parameter of its function, in declaration
order (a kernel takes it as an argument, checked against the arrays'
shapes), except a variable a ``T.match_buffer`` binds.
"""

from __future__ import annotations

import ast

from ..ir.nodes import Buffer, Var
from ..ir.visitor import walk
from .source import Source, symbolic_targets, t_attr


def type_var(src: Source, node: ast.stmt) -> Var | None:
    """``n = TypeVar("n")`` at module level: the int64 variable ``n``; None otherwise."""
    if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "TypeVar"):
        return None
    call = node.value
    target = node.targets[0] if len(node.targets) == 1 else None
    if (not isinstance(target, ast.Name) or len(call.args) != 1 or call.keywords
            or not isinstance(call.args[0], ast.Constant) or call.args[0].value != target.id):
        raise src.error(node, 'a symbolic size is declared as n = TypeVar("n"), with the '
                              "name it is assigned to")
    return Var(target.id, "int64")


def handle_annotation(node: ast.expr) -> bool:
    """True for ``T.handle("float32")`` and ``T.handle("float32", "global")``: a pointer."""
    return isinstance(node, ast.Call) and t_attr(node.func) == "handle"


def _shape_node(ann: ast.expr) -> ast.expr | None:
    """The shape argument of ``T.Buffer(shape, ...)`` or ``T.Buffer[shape, ...]``."""
    if isinstance(ann, ast.Call):
        if ann.args:
            return ann.args[0]
        return next((kw.value for kw in ann.keywords if kw.arg == "shape"), None)
    if isinstance(ann, ast.Subscript):
        key = ann.slice
        if (isinstance(key, ast.Tuple) and len(key.elts) == 2
                and isinstance(key.elts[1], ast.Constant)):
            return key.elts[0]
        return key
    return None


class Symbolic:
    """The symbolic sizes of one function, in declaration order."""

    def __init__(self, src: Source, func: ast.FunctionDef, outer: dict[str, Var]):
        self.src = src
        self.outer = dict(outer)  # the module's TypeVar sizes
        # The dtypes the body declares, so that a quoted name made first takes it.
        self.dtypes: dict[str, str] = {}
        for node in func.body:
            for name, dtype in symbolic_targets(node) or ():
                self.dtypes.setdefault(name.id, dtype)
        self.order: list[Var] = []
        self.quoted: set[Var] = set()
        self.bound: set[Var] = set()  # bound by a T.match_buffer's elem_offset=

    def declare_quoted(self, env: dict, args: list[ast.arg]) -> None:
        """Declare every name quoted in the shapes of the buffer parameters ``args``."""
        for a in args:
            shape = _shape_node(a.annotation)
            for node in ast.walk(shape) if shape is not None else ():
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and node.value.isidentifier()) or node.value in env:
                    continue
                name = node.value
                var = Var(name, self.dtypes.get(name, "int32"))
                env[name] = var
                self.order.append(var)
                self.quoted.add(var)

    def declare(self, name: ast.Name, dtype: str, env: dict) -> Var:
        """``n = T.int32()`` in the header: a new size, or the one a quoted ``"n"`` made."""
        found = env.get(name.id)
        if isinstance(found, Var) and found in self.quoted:
            if found.dtype != dtype:
                raise self.src.error(name, f"{name.id!r} is {found.dtype} in the shapes "
                                           f"but declared T.{dtype}()")
            self.quoted.discard(found)  # declared once; a second declaration is an error
            return found
        if name.id in env:
            raise self.src.error(name, f"the name {name.id!r} is already in use here")
        var = Var(name.id, dtype)
        env[name.id] = var
        self.order.append(var)
        return var

    def declare_inner(self, name: ast.Name, dtype: str) -> Var:
        """``x = T.int32()`` down the body: a size, unless a ``T.match_buffer`` binds it."""
        var = Var(name.id, dtype)
        self.order.append(var)
        return var

    def parameters(self, params: tuple, body) -> tuple[Var, ...]:
        """The trailing scalar parameters: declared sizes not bound in the body, then
        the module's ``TypeVar`` sizes the function uses."""
        out = [v for v in self.order if v not in self.bound]
        used = set()
        for p in params:
            if isinstance(p, Buffer):
                used.update(d for d in p.shape if isinstance(d, Var))
        used.update(x for x in walk(body) if isinstance(x, Var))
        for var in self.outer.values():
            if var in used and var not in out:
                out.append(var)
        return tuple(out)
