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
  conditions are ``bool``, a store's value has the buffer's dtype;
- vectors agree: a ``T.Ramp`` is of integers, a ``T.Broadcast`` of a scalar,
  a vector index's lanes are the stored value's;
- a view (:class:`~.nodes.DeclBuffer`) is of a buffer in scope, of its
  dtype, with an integer offset; its extents may name any variable in scope.
- a block's header (:mod:`polypad.ir.block_header`) names known axis kinds
  with integer domains over variables defined outside the block, and
  regions over buffers in scope (or the block's own) with one range per axis.
- no statement object appears twice in the tree (:mod:`.shared_statements`):
  analyses find statements by identity.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from polypad.arguments import expect
from polypad.errors import VerifyError

from . import dtypes
from .block_header import layout
from .field_types import field_problems
from .nodes import (
    Allocate,
    And,
    Assert,
    AttrStmt,
    BinaryOp,
    Block,
    Broadcast,
    Buffer,
    BufferData,
    BufferLoad,
    BufferStore,
    Call,
    Compare,
    DeclBuffer,
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
    Ramp,
    Select,
    Var,
)
from .shared_statements import shared_statement_problems
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

    def check_shape(self, buffer: Buffer, declared: bool = False) -> None:
        for extent in buffer.shape:
            if isinstance(extent, Var) and extent not in self.params and not (
                    declared and extent in self.vars):
                self.report(f"extent {extent.name!r} of buffer {buffer.name!r} "
                            "is not a scalar parameter")

    def expect(self, expr: Expr, kind: str, what: str, lanes: bool = False) -> None:
        """``expr`` is ``kind`` (``bool``, ``int``); with ``lanes``, a vector of it too."""
        dtype = dtypes.element(expr.dtype) if lanes else expr.dtype
        ok = {"bool": dtypes.is_bool, "int": dtypes.is_int}[kind](dtype)
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

    def visit_Block(self, node: Block) -> None:
        if node.header is not None:
            self.block_header(node)
        self.visit(node.body)

    def block_header(self, node: Block) -> None:
        header, where = node.header, f"block {node.name!r}"
        for axis in header.axes:
            if axis.kind not in ("S", "R", "scan", "O"):
                self.report(f"{where}: axis {axis.var.name!r} has the unknown kind {axis.kind!r}")
            for bound, what in ((axis.min, "min"), (axis.extent, "extent")):
                self.visit(bound)
                if bound.dtype != axis.var.dtype:
                    self.report(f"{where}: the domain {what} of axis {axis.var.name!r} is "
                                f"{bound.dtype}, the axis {axis.var.dtype}")
        own = {a.buffer for a in layout(node.body, header).allocates}
        axes = {a.var for a in header.axes} - self.vars
        self.vars |= axes
        try:
            for regions in (header.reads, header.writes):
                for r in regions or ():
                    if r.buffer not in self.buffers and r.buffer not in own:
                        self.report(f"{where}: a region of buffer {r.buffer.name!r}, which is "
                                    "neither a parameter nor allocated here")
                    if len(r.region) != r.buffer.ndim:
                        self.report(f"{where}: a region of {r.buffer.name} has "
                                    f"{len(r.region)} ranges for {r.buffer.ndim} axes")
                    for lo, extent in r.region:
                        for e in (lo, extent):
                            self.visit(e)
                            self.expect(e, "int", f"a region bound of {r.buffer.name}")
        finally:
            self.vars -= axes
        for key, _ in header.annotations:
            if not isinstance(key, str):
                self.report(f"{where}: an annotation key must be a string, got {key!r}")

    def visit_DeclBuffer(self, node: DeclBuffer) -> None:
        buffer = node.buffer
        self.check_shape(buffer, declared=True)
        if isinstance(buffer.data, Buffer):
            if buffer.data not in self.buffers:
                self.report(f"view {buffer.name!r} is of buffer {buffer.data.name!r}, which "
                            "is not in scope")
            if buffer.data.dtype != buffer.dtype:
                self.report(f"view {buffer.name!r} is {buffer.dtype} over the "
                            f"{buffer.data.dtype} buffer {buffer.data.name!r}")
        elif isinstance(buffer.data, Expr):
            self.visit(buffer.data)
            if not dtypes.is_handle(buffer.data.dtype):
                self.report(f"the data of {buffer.name!r} must be a handle: {show(buffer.data)}")
        if buffer.elem_offset is not None:
            self.visit(buffer.elem_offset)
            self.expect(buffer.elem_offset, "int", f"the offset of view {buffer.name!r}")
        self.buffers.add(buffer)
        try:
            self.visit(node.body)
        finally:
            self.buffers.discard(buffer)

    def visit_AttrStmt(self, node: AttrStmt) -> None:
        parts = node.node if isinstance(node.node, tuple) else (node.node,)
        for part in parts:
            if isinstance(part, Buffer) and part not in self.buffers:
                self.report(f"T.attr names buffer {part.name!r}, which is not in scope")
        self.generic_visit(node)

    def visit_Assert(self, node: Assert) -> None:
        self.expect(node.condition, "bool", "an assert condition")
        self.generic_visit(node)

    def visit_IfThenElse(self, node: IfThenElse) -> None:
        self.expect(node.condition, "bool", "if condition")
        self.generic_visit(node)

    def visit_BufferStore(self, node: BufferStore) -> None:
        self.access(node.buffer, node.indices)
        lanes = max((dtypes.lanes(i.dtype) for i in node.indices), default=1)
        if node.value.dtype != dtypes.with_lanes(node.buffer.dtype, lanes):
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
        lanes = {dtypes.lanes(i.dtype) for i in indices} - {1}
        if len(lanes) > 1:
            self.report(f"the indices of {buffer.name} have different lane counts")
        for index in indices:
            self.visit(index)
            self.expect(index, "int", f"an index of {buffer.name}", lanes=True)
            self.no_undef(index, f"an index of {buffer.name}")

    def visit_BufferData(self, node: BufferData) -> None:
        if node.buffer not in self.buffers:
            self.report(f"{node.buffer.name}.data names a buffer that is not in scope")

    def visit_Ramp(self, node: Ramp) -> None:
        self.generic_visit(node)
        for part in (node.base, node.stride):
            self.expect(part, "int", "a T.Ramp's base and stride")
        if node.base.dtype != node.stride.dtype:
            self.report(f"T.Ramp's base and stride differ in dtype: {show(node)}")
        if node.lanes < 1:
            self.report(f"T.Ramp has {node.lanes} lanes")

    def visit_Broadcast(self, node: Broadcast) -> None:
        self.generic_visit(node)
        if dtypes.lanes(node.value.dtype) != 1 or node.lanes < 1:
            self.report(f"T.Broadcast takes a scalar to one lane or more: {show(node)}")

    def visit_BinaryOp(self, node: BinaryOp) -> None:
        self.generic_visit(node)
        if node.a.dtype != node.b.dtype:
            self.report(f"operands of {type(node).__name__} have dtypes {node.a.dtype} and "
                        f"{node.b.dtype}: {show(node)}")
        if dtypes.is_bool(node.a.dtype):
            self.report(f"arithmetic on bool: {show(node)}")
        if isinstance(node, Div) and not dtypes.is_float(dtypes.element(node.a.dtype)):
            self.report(f"true division of integers (use //): {show(node)}")

    def visit_Compare(self, node: Compare) -> None:
        self.generic_visit(node)
        if node.a.dtype != node.b.dtype:
            self.report(f"comparison of {node.a.dtype} with {node.b.dtype}: {show(node)}")

    def visit_And(self, node: And | Or | Not) -> None:
        self.generic_visit(node)
        for operand in (node.a, getattr(node, "b", None)):
            if operand is not None:
                self.expect(operand, "bool", f"an operand of {type(node).__name__}", lanes=True)

    visit_Or = visit_Not = visit_And

    def visit_Select(self, node: Select) -> None:
        self.generic_visit(node)
        self.expect(node.condition, "bool", "a select condition", lanes=True)
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
    return verifier.problems + shared_statement_problems(node)


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
