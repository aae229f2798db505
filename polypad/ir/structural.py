"""Structural equality up to the renaming of bound variables and buffers.

Two functions are structurally equal when they have the same shape and every
variable (or buffer) bound in one is used, consistently, where the matching
one is bound in the other.  Binding sites are loop counters, lets,
parameters and allocations.  Free variables must be the same object unless
``map_free_vars=True``, in which case they are mapped on first sight.

Variable names are not compared (``i`` and ``io`` may match); buffer names
are, because a buffer's name is part of a function's interface.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.arguments import expect

from .deep import guarded
from .nodes import (
    Allocate,
    Buffer,
    CommReducer,
    DeclBuffer,
    Expr,
    For,
    IRModule,
    Let,
    LetStmt,
    PrimFunc,
    Stmt,
    Var,
)
from .show import show
from .visitor import node_fields


@dataclass
class Mismatch:
    """Where two trees first differ: a field path and the two values."""

    path: str
    lhs: object
    rhs: object


#: Where a comparison is: the root's name, or (the parent's path, a suffix).  Built
#: as a chain and spelled only on a mismatch: a string per level would copy the
#: whole path at every level of a 10,000-term sum.
_Path = str | tuple


def spelled_path(path: _Path) -> str:
    """The text of a path built as a chain ``(parent, suffix)`` down from a root name:
    ``f.body.stmts[0].body``."""
    parts = []
    while isinstance(path, tuple):
        path, suffix = path
        parts.append(suffix)
    parts.append(path)
    return "".join(reversed(parts))


def _compared(attrs: tuple) -> tuple:
    """A buffer's TVM attributes that decide equality: not an allocation's
    ``annotations`` (hints for TVM's passes, kept for the printer only, as a loop's)."""
    return tuple(kv for kv in attrs if kv[0] != "annotations")


@dataclass
class _Matcher:
    map_free_vars: bool
    vars: dict = field(default_factory=dict)
    buffers: dict = field(default_factory=dict)
    mismatch: Mismatch | None = None

    def fail(self, path: _Path, lhs, rhs) -> bool:
        if self.mismatch is None:
            self.mismatch = Mismatch(spelled_path(path), lhs, rhs)
        return False

    # -- identities -------------------------------------------------------

    def bind_var(self, a: Var, b: Var, path: _Path) -> bool:
        if a.dtype != b.dtype:
            return self.fail((path, ".dtype"), a, b)
        self.vars[a] = b
        return True

    def var(self, a: Var, b: Var, path: _Path) -> bool:
        if a in self.vars:
            return self.vars[a] is b or self.fail(path, a, b)
        if a is b or (self.map_free_vars and a.dtype == b.dtype
                      and b not in self.vars.values()):
            # Record the pairing so later uses of ``a`` must meet ``b`` again.
            self.vars[a] = b
            return True
        return self.fail(path, a, b)

    def bind_buffer(self, a: Buffer, b: Buffer, path: _Path) -> bool:
        if not self.buffer_decl(a, b, path):
            return False
        self.buffers[a] = b
        return True

    def buffer_decl(self, a: Buffer, b: Buffer, path: _Path) -> bool:
        if (a.name, a.dtype, a.axis_separators, a.scope, _compared(a.tvm_attrs)) != (
                b.name, b.dtype, b.axis_separators, b.scope, _compared(b.tvm_attrs)):
            return self.fail(path, a, b)
        if len(a.shape) != len(b.shape):
            return self.fail((path, ".shape"), a.shape, b.shape)
        for k, (x, y) in enumerate(zip(a.shape, b.shape)):
            if isinstance(x, Var) and isinstance(y, Var):
                if not self.var(x, y, (path, f".shape[{k}]")):
                    return False
            elif x != y:
                return self.fail((path, f".shape[{k}]"), x, y)
        # A view: the memory it shares (mapped like any use) and where in it.
        return (self.equal(a.data, b.data, (path, ".data"))
                and self.equal(a.elem_offset, b.elem_offset, (path, ".elem_offset")))

    def buffer(self, a: Buffer, b: Buffer, path: _Path) -> bool:
        if a in self.buffers:
            return self.buffers[a] is b or self.fail(path, a, b)
        if a is b:
            return True
        if self.map_free_vars:
            return self.bind_buffer(a, b, path)
        return self.fail(path, a, b)

    # -- trees --------------------------------------------------------------

    @guarded
    def equal(self, a, b, path: _Path) -> bool:
        # No `a is b` shortcut: a shared subtree may sit under different
        # binders on each side, and must then be compared through the map.
        if isinstance(a, Var) and isinstance(b, Var):
            return self.var(a, b, path)
        if isinstance(a, Buffer) and isinstance(b, Buffer):
            return self.buffer(a, b, path)
        if isinstance(a, tuple) and isinstance(b, tuple):
            if len(a) != len(b):
                return self.fail((path, ".len"), a, b)
            return all(self.equal(x, y, (path, f"[{k}]")) for k, (x, y) in enumerate(zip(a, b)))
        if type(a) is not type(b):
            return self.fail(path, a, b)
        if isinstance(a, (For, Let, LetStmt)):
            return self.binder(a, b, path)
        if isinstance(a, (Allocate, DeclBuffer)):
            return (self.bind_buffer(a.buffer, b.buffer, (path, ".buffer"))
                    and self.equal(a.body, b.body, (path, ".body")))
        if isinstance(a, CommReducer):
            return self.reducer(a, b, path)
        if isinstance(a, PrimFunc):
            return self.func(a, b, path)
        if isinstance(a, IRModule):
            return self.module(a, b, path)
        if not hasattr(type(a), "__dataclass_fields__"):
            return a == b or self.fail(path, a, b)
        return all(self.equal(getattr(a, n), getattr(b, n), (path, "." + n))
                   for n in node_fields(a))

    def binder(self, a, b, path: _Path) -> bool:
        # Everything but the body is evaluated outside the binding's scope.
        for name in node_fields(a):
            if name in ("var", "body"):
                continue
            if not self.equal(getattr(a, name), getattr(b, name), (path, "." + name)):
                return False
        return (self.bind_var(a.var, b.var, (path, ".var"))
                and self.equal(a.body, b.body, (path, ".body")))

    def reducer(self, a: CommReducer, b: CommReducer, path: _Path) -> bool:
        # The identities are outside the lambda; its parameters are bound for its results.
        if not self.equal(a.identities, b.identities, (path, ".identities")):
            return False
        for name in ("lhs", "rhs"):
            mine, theirs = getattr(a, name), getattr(b, name)
            if len(mine) != len(theirs):
                return self.fail((path, f".{name}.len"), mine, theirs)
            for k, (x, y) in enumerate(zip(mine, theirs)):
                if not self.bind_var(x, y, (path, f".{name}[{k}]")):
                    return False
        return self.equal(a.results, b.results, (path, ".results"))

    def func(self, a: PrimFunc, b: PrimFunc, path: _Path) -> bool:
        if len(a.params) != len(b.params):
            return self.fail((path, ".params"), a.params, b.params)
        # Scalar parameters first: buffer shapes may refer to them.
        pairs = list(enumerate(zip(a.params, b.params)))
        for k, (x, y) in pairs:
            if type(x) is not type(y):
                return self.fail((path, f".params[{k}]"), x, y)
            if isinstance(x, Var) and not self.bind_var(x, y, (path, f".params[{k}]")):
                return False
        for k, (x, y) in pairs:
            if isinstance(x, Buffer) and not self.bind_buffer(x, y, (path, f".params[{k}]")):
                return False
        if a.attrs != b.attrs:
            return self.fail((path, ".attrs"), a.attrs, b.attrs)
        if a.ret_dtype != b.ret_dtype:
            return self.fail((path, ".ret_dtype"), a.ret_dtype, b.ret_dtype)
        return self.equal(a.body, b.body, (path, ".body"))

    def module(self, a: IRModule, b: IRModule, path: _Path) -> bool:
        names_a, names_b = [f.name for f in a.funcs], [f.name for f in b.funcs]
        if sorted(names_a) != sorted(names_b):
            return self.fail((path, ".funcs"), names_a, names_b)
        return all(self.equal(a[n], b[n], (path, f"[{n!r}]")) for n in names_a)


def structural_equal(a, b, *, map_free_vars: bool = False) -> bool:
    """True when ``a`` and ``b`` are equal up to renaming of bound variables.

    >>> structural_equal(parse(text), parse(text))
    True
    """
    _check(a, b, "structural_equal")
    return _Matcher(map_free_vars).equal(a, b, _root(a))


def first_mismatch(a, b, *, map_free_vars: bool = False) -> Mismatch | None:
    """The first place where ``a`` and ``b`` differ, or None when they are equal."""
    _check(a, b, "first_mismatch")
    matcher = _Matcher(map_free_vars)
    matcher.equal(a, b, _root(a))
    return matcher.mismatch


def assert_structural_equal(a, b, *, map_free_vars: bool = False) -> None:
    """Raise ``AssertionError`` showing both trees and where they first differ."""
    _check(a, b, "assert_structural_equal")
    mismatch = first_mismatch(a, b, map_free_vars=map_free_vars)
    if mismatch is None:
        return
    raise AssertionError(
        f"structural mismatch at {mismatch.path}:\n"
        f"  lhs: {show(mismatch.lhs)}\n  rhs: {show(mismatch.rhs)}\n"
        f"--- lhs ---\n{show(a)}\n--- rhs ---\n{show(b)}"
    )


# What the comparisons take: IR, a tuple of IR, or None (an absent branch).
_COMPARABLE = (PrimFunc, IRModule, Stmt, Expr, Buffer, tuple, None)
_WHAT = "an IR node (PrimFunc, IRModule, Stmt, Expr or Buffer), a tuple of them, or None"


def _check(a, b, where: str) -> None:
    expect(a, _COMPARABLE, "a", where, what=_WHAT)
    expect(b, _COMPARABLE, "b", where, what=_WHAT)


def _root(node) -> str:
    return type(node).__name__
