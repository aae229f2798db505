"""The well-formedness check every pass must preserve ("valid IR in, valid IR out").

A function is well formed when:
- every field holds what the grammar says (:mod:`.field_types`): a statement
  where a statement is required (never ``None``), expressions where
  expressions are;
- every variable is defined before use (parameter, loop counter or let) and
  no binding shadows itself;
- every buffer used is a parameter or allocated in an enclosing scope, and
  symbolic buffer extents are scalar parameters;
- every access has as many indices as its buffer has axes, indices are
  integers, and ``T.undef()`` appears in no index or loop bound;
- dtypes agree: operands of arithmetic and comparisons share one dtype,
  conditions are ``bool``, a store's value has the buffer's dtype.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from polypad.arguments import expect
from polypad.errors import VerifyError

from . import dtypes
from .field_types import field_problems
from .nodes import (
    Allocate,
    And,
    BinaryOp,
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Compare,
    Div,
    Expr,
    For,
    IfThenElse,
    IntImm,
    IRModule,
    Let,
    LetStmt,
    Not,
    Or,
    PrimFunc,
    Select,
    Var,
)
from .show import show
from .visitor import Visitor, walk


class _Verifier(Visitor):
    def __init__(self):
        self.problems: list[str] = []
        self.vars: set[Var] = set()
        self.buffers: set[Buffer] = set()
        self.params: set[Var] = set()

    def report(self, message: str) -> None:
        self.problems.append(message)

    def visit(self, node) -> None:
        # A node whose fields break the grammar is reported and not looked into:
        # the checks below read its children's dtypes.
        wrong = field_problems(node)
        if wrong:
            where = _where(node)
            self.problems.extend(f"{problem}{where}" for problem in wrong)
            return
        super().visit(node)

    @contextmanager
    def scope_var(self, var: Var):
        if var in self.vars:
            self.report(f"variable {var.name!r} is bound again inside its own scope")
        self.vars.add(var)
        try:
            yield
        finally:
            self.vars.discard(var)

    @contextmanager
    def scope_buffer(self, buffer: Buffer):
        self.check_shape(buffer)
        self.buffers.add(buffer)
        try:
            yield
        finally:
            self.buffers.discard(buffer)

    def check_shape(self, buffer: Buffer) -> None:
        for extent in buffer.shape:
            if isinstance(extent, Var) and extent not in self.params:
                self.report(f"extent {extent.name!r} of buffer {buffer.name!r} "
                            "is not a scalar parameter")

    def expect(self, expr: Expr, kind: str, what: str) -> None:
        ok = {"bool": dtypes.is_bool, "int": dtypes.is_int}[kind](expr.dtype)
        if not ok:
            self.report(f"{what} must be {kind}, got {expr.dtype}: {show(expr)}")

    def no_undef(self, expr: Expr, what: str) -> None:
        if any(isinstance(n, Call) and n.op == "undef" for n in walk(expr)):
            self.report(f"T.undef() may not appear in {what}: {show(expr)}")

    # -- top level ----------------------------------------------------------

    def visit_PrimFunc(self, func: PrimFunc) -> None:
        self.params = {p for p in func.params if isinstance(p, Var)}
        self.vars |= self.params
        for p in func.params:
            if isinstance(p, Buffer):
                self.check_shape(p)
                self.buffers.add(p)
        self.visit(func.body)

    def visit_IRModule(self, module: IRModule) -> None:
        for func in module.funcs:
            self.vars, self.buffers = set(), set()
            self.visit(func)

    # -- statements ---------------------------------------------------------

    def visit_For(self, node: For) -> None:
        for bound, name in ((node.min, "loop min"), (node.extent, "loop extent")):
            self.visit(bound)
            self.expect(bound, "int", name)
            self.no_undef(bound, name)
        if not dtypes.is_int(node.var.dtype):
            self.report(f"loop variable {node.var.name!r} must be an integer")
        elif isinstance(node.min, IntImm) and isinstance(node.extent, IntImm):
            last = node.min.value + node.extent.value - 1
            bits = dtypes.bits(node.var.dtype)
            lo, hi = ((0, 2**bits - 1) if node.var.dtype.startswith("u")
                      else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
            if node.extent.value > 0 and not (lo <= node.min.value and last <= hi):
                where = f" at line {node.span.line}" if node.span is not None else ""
                self.report(f"loop {node.var.name!r}{where} runs to {last}, outside the range "
                            f"of its {node.var.dtype} counter")
        with self.scope_var(node.var):
            self.visit(node.body)

    def visit_LetStmt(self, node: LetStmt | Let) -> None:
        self.visit(node.value)
        if node.var.dtype != node.value.dtype:
            self.report(f"let {node.var.name!r} is {node.var.dtype} but its value is "
                        f"{node.value.dtype}")
        with self.scope_var(node.var):
            self.visit(node.body)

    visit_Let = visit_LetStmt

    def visit_Allocate(self, node: Allocate) -> None:
        with self.scope_buffer(node.buffer):
            self.visit(node.body)

    def visit_IfThenElse(self, node: IfThenElse) -> None:
        self.expect(node.condition, "bool", "if condition")
        self.generic_visit(node)

    def visit_BufferStore(self, node: BufferStore) -> None:
        self.access(node.buffer, node.indices)
        if node.value.dtype != node.buffer.dtype:
            self.report(f"store to {node.buffer.name} ({node.buffer.dtype}) of a "
                        f"{node.value.dtype} value: {show(node.value)}")
        self.visit(node.value)

    # -- expressions --------------------------------------------------------

    def visit_Var(self, var: Var) -> None:
        if var not in self.vars:
            self.report(f"variable {var.name!r} is used before it is defined")

    def visit_BufferLoad(self, node: BufferLoad) -> None:
        self.access(node.buffer, node.indices)

    def access(self, buffer: Buffer, indices) -> None:
        if buffer not in self.buffers:
            self.report(f"buffer {buffer.name!r} is neither a parameter nor allocated here")
        if len(indices) != len(buffer.shape):
            self.report(f"{buffer.name} has {len(buffer.shape)} axes but is indexed with "
                        f"{len(indices)}: {buffer.name}[{', '.join(show(i) for i in indices)}]")
        for index in indices:
            self.visit(index)
            self.expect(index, "int", f"an index of {buffer.name}")
            self.no_undef(index, f"an index of {buffer.name}")

    def visit_BinaryOp(self, node: BinaryOp) -> None:
        self.generic_visit(node)
        if node.a.dtype != node.b.dtype:
            self.report(f"operands of {type(node).__name__} have dtypes {node.a.dtype} and "
                        f"{node.b.dtype}: {show(node)}")
        if dtypes.is_bool(node.a.dtype):
            self.report(f"arithmetic on bool: {show(node)}")
        if isinstance(node, Div) and not dtypes.is_float(node.a.dtype):
            self.report(f"true division of integers (use //): {show(node)}")

    def visit_Compare(self, node: Compare) -> None:
        self.generic_visit(node)
        if node.a.dtype != node.b.dtype:
            self.report(f"comparison of {node.a.dtype} with {node.b.dtype}: {show(node)}")

    def visit_And(self, node: And | Or | Not) -> None:
        self.generic_visit(node)
        for operand in (node.a, getattr(node, "b", None)):
            if operand is not None:
                self.expect(operand, "bool", f"an operand of {type(node).__name__}")

    visit_Or = visit_Not = visit_And

    def visit_Select(self, node: Select) -> None:
        self.generic_visit(node)
        self.expect(node.condition, "bool", "a select condition")
        if node.true_value.dtype != node.false_value.dtype:
            self.report(f"select branches differ in dtype: {show(node)}")

    def visit_Call(self, node: Call) -> None:
        self.generic_visit(node)
        if node.op in ("assume", "likely"):
            self.expect(node.args[0], "bool", f"the argument of T.{node.op}")


def _where(node) -> str:
    """`` (in ...)``: the node, for a message, as far as it can be shown."""
    match node:
        case For():
            text = f"loop {node.var.name}"
        case IfThenElse():
            text = f"if {show(node.condition)}" if isinstance(node.condition, Expr) else "if"
        case LetStmt():
            text = f"let {node.var.name}"
        case BufferStore() if isinstance(node.buffer, Buffer):
            text = f"store to {node.buffer.name}"
        case Block():
            text = f"block {node.name!r}"
        case Allocate() if isinstance(node.buffer, Buffer):
            text = f"allocation of {node.buffer.name}"
        case PrimFunc():
            text = f"function {node.name}"
        case _:
            text = type(node).__name__
    span = getattr(node, "span", None)
    line = f" at line {span.line}" if span is not None else ""
    return f" (in {text}{line})"


def problems(node: PrimFunc | IRModule) -> list[str]:
    """Every well-formedness problem of ``node``, as readable sentences."""
    expect(node, (PrimFunc, IRModule), "node", "verify")
    verifier = _Verifier()
    verifier.visit(node)
    return verifier.problems


def verify(node: PrimFunc | IRModule) -> None:
    """Raise :class:`VerifyError` listing every problem, or return None."""
    found = problems(node)
    if found:
        name = getattr(node, "name", "")
        raise VerifyError(f"{name} is not well formed:\n  " + "\n  ".join(found))


def checked_result(out: PrimFunc, before: PrimFunc, where: str) -> PrimFunc:
    """``out``, what pass or primitive ``where`` made of ``before``, verified when the
    environment variable ``POLYPAD_VERIFY_PASSES`` is set ("valid IR in, valid IR
    out"; the test suite and the fuzzer set it): a :class:`VerifyError` names
    ``where`` and every problem, at the rewrite that made them."""
    if out is not before and os.environ.get("POLYPAD_VERIFY_PASSES"):
        found = problems(out)
        if found:
            raise VerifyError(f"{where} built ill-formed IR from {before.name}:\n  "
                              + "\n  ".join(found))
    return out
