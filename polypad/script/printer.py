"""IR to script text: ``script(node)`` prints what ``parse`` reads back.

The output is canonical: loops print as ``T.serial(n)`` (or ``T.serial(lo,
hi)``, ``T.parallel``...), one loop per ``for``; parentheses are the
fewest that precedence needs; a constant's dtype is written only where the
text would not imply it (``i64 + 1`` but ``T.int64(1) + T.int64(2)``); and
two variables sharing a name in one scope print as ``i`` and ``i_1``.  For
well-typed IR, ``parse(script(f))`` is structurally equal to ``f``.
"""

from __future__ import annotations

import json
import math

from ..errors import VerifyError
from ..ir import intrinsics
from ..ir.deep import guarded
from ..ir.nodes import (
    Add,
    Allocate,
    And,
    BinaryOp,
    BoolImm,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Compare,
    DeclBuffer,
    Div,
    Eq,
    Evaluate,
    Expr,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
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
    Stmt,
    Sub,
    Var,
)
from ..ir.ranges import FLOAT_MAX
from ..ir.substitute import free_symbols
from ..ir.truncation import truncation
from .names import Namer, sanitize
from .parse_buffer import SHAPE_DTYPE
from .parse_thread import THREAD_KINDS
from .print_block import SPELLINGS, BlockPrinting, has_blocks, root_allocations
from .print_lowered import LoweredPrinter, attr_text
from .print_sizes import declared_sizes

# Python precedence, loosest first.
OR, AND, NOT, CMP, ADD, MUL, UNARY, ATOM = range(1, 9)

_ARITH = {Add: ("+", ADD), Sub: ("-", ADD), Mul: ("*", MUL), Div: ("/", MUL),
          FloorDiv: ("//", MUL), FloorMod: ("%", MUL)}
_NODE_NAMES = {Add: "Add", Sub: "Sub", Mul: "Mul", FloorDiv: "FloorDiv", FloorMod: "FloorMod"}
_CMP = {Eq: "==", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">="}
_INDENT = "    "


def script(node, *, spelling: str = "tirx") -> str:
    """Script text for a PrimFunc, IRModule, statement, expression or buffer.

    ``spelling`` is TVM 0.27's ``"tirx"`` (``T.sblock``, ``@T.prim_func(s_tir=True)``),
    which TVM 0.27 reads, or the older ``"tir"`` (``T.block``); polypad reads both.

    >>> script(parse(text)) == script(parse(script(parse(text))))
    True
    """
    from ..arguments import expect, expect_choice
    expect(node, (PrimFunc, IRModule, Stmt, Expr, Buffer), "node", "script")
    expect_choice(spelling, SPELLINGS, "spelling", "script")
    p = _Printer(spelling)
    if isinstance(node, IRModule):
        p.module(node)
    elif isinstance(node, PrimFunc):
        p.func(node, 0)
    elif isinstance(node, Stmt):
        p.bind_free(node)
        p.stmt(node, 0)
    elif isinstance(node, Expr):
        p.bind_free(node)
        return p.expr(node)
    elif isinstance(node, Buffer):
        return p.buffer_type(node)
    else:
        raise TypeError(f"script() cannot print {type(node).__name__}")
    return "\n".join(p.lines) + "\n"


def _weak(e: Expr) -> bool:
    """Printed bare, ``e`` would take its dtype from the operand beside it."""
    return isinstance(e, (IntImm, FloatImm, BoolImm)) or intrinsics.is_call(e, "undef")


def _bare_int(e: Expr) -> bool:
    """An int32 constant, which prints as a bare Python int."""
    return isinstance(e, IntImm) and e.dtype == "int32"


def _is_zero(e: Expr) -> bool:
    return (isinstance(e, (IntImm, FloatImm)) and e.value == 0
            and math.copysign(1.0, e.value) > 0)


class _Printer(BlockPrinting, LoweredPrinter):
    def __init__(self, spelling: str):
        self.namer = Namer()
        self.lines: list[str] = []
        self.spelling = spelling
        self.loops: dict = {}  # loop counter -> (min, extent)
        self.root: tuple[Allocate, ...] = ()  # allocations printed as the root block's
        self.quote: set[Var] = set()  # sizes to quote at their next (first) use

    def emit(self, indent: int, text: str) -> None:
        self.lines.append(_INDENT * indent + text)

    def bind_free(self, node) -> None:
        variables, buffers = free_symbols(node)
        for obj in buffers + variables:
            self.namer.bind(obj)

    # ------------------------------------------------------------ top level

    def module(self, mod: IRModule) -> None:
        self.type_vars(mod.funcs)
        self.emit(0, "@I.ir_module")
        self.emit(0, f"class {sanitize(mod.name)}:")
        if not mod.funcs:
            self.emit(1, "pass")
        for k, f in enumerate(mod.funcs):
            if k:
                self.lines.append("")
            self.func(f, 1)

    def type_vars(self, funcs) -> None:
        """TVM 0.27's module-level ``n = TypeVar("n")`` for the int64 sizes of ``funcs``."""
        if self.spelling != "tirx":
            return
        names: list[str] = []
        for f in funcs:
            sizes = declared_sizes(f)
            names += [v.name for v in sizes.type_vars if v.name not in names] if sizes else []
        for name in names:
            self.emit(0, f'{name} = TypeVar("{name}")')

    def func(self, f: PrimFunc, indent: int) -> None:
        self.namer = Namer()
        # Buffers first: their names are part of the interface and must not move.
        for p in sorted(f.params, key=lambda p: not isinstance(p, Buffer)):
            self.namer.bind(p)
        self.bind_free(f)
        # TVM 0.27 marks every function it prints s_tir (its blocks' dialect).
        s_tir = self.spelling == "tirx"
        sizes = declared_sizes(f) if s_tir else None
        shown = f.params[:len(f.params) - sizes.count] if sizes else f.params
        self.quote = set(sizes.quoted) if sizes else set()  # quoted at their first use
        params = ", ".join(
            f"{self.namer.name(p)}: {self.buffer_type(p)}" if isinstance(p, Buffer)
            else f"{self.namer.name(p)}: T.{p.dtype}" for p in shown)
        if indent == 0:
            self.type_vars([f])
        self.emit(indent, "@T.prim_func(s_tir=True)" if s_tir else "@T.prim_func")
        returns = f" -> T.{f.ret_dtype}" if f.ret_dtype is not None else ""
        self.emit(indent, f"def {f.name}({params}){returns}:")
        if sizes and sizes.declaration():
            self.emit(indent + 1, sizes.declaration())
        if f.attrs:
            items = ", ".join(f"{json.dumps(k)}: {attr_text(v)}" for k, v in f.attrs)
            self.emit(indent + 1, f"T.func_attr({{{items}}})")
        # In TVM 0.27 the buffers a function with blocks opens with are its root block's.
        self.root = root_allocations(f.body) if s_tir and has_blocks(f.body) else ()
        self.stmt(f.body, indent + 1)

    def buffer_type(self, b: Buffer) -> str:
        return f"T.Buffer({self._buffer_args(b)})"

    def _buffer_args(self, b: Buffer) -> str:
        wide = (SHAPE_DTYPE, "int64") in b.tvm_attrs
        dims = [str(d.value) if isinstance(d, IntImm) else
                self._dim(d) if isinstance(d, Var) else
                f"T.int64({d})" if wide else str(d) for d in b.shape]
        shape = f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"
        out = f'{shape}, "{b.dtype}"'
        if b.scope != "global":
            out += f", scope={json.dumps(b.scope)}"
        if b.axis_separators:
            out += f", axis_separators={list(b.axis_separators)}"
        for key, value in b.tvm_attrs:
            if key == SHAPE_DTYPE:
                continue
            out += f", {key}={json.dumps(value) if isinstance(value, str) else attr_text(value)}"
        return out

    def _dim(self, var: Var) -> str:
        if var in self.quote:  # a size TVM 0.27 declares at its first use: "n"
            self.quote.discard(var)
            return json.dumps(self.namer.name(var))
        return self.namer.name(var)

    # ------------------------------------------------------------ statements

    @guarded
    def stmt(self, s: Stmt, indent: int) -> None:
        method = getattr(self, "_" + type(s).__name__, None)
        if method is None:
            raise VerifyError(f"script() cannot print the statement {type(s).__name__}: "
                              "the IR is not well formed (pp.verify says where)")
        method(s, indent)

    def _SeqStmt(self, s: SeqStmt, indent: int) -> None:
        if not s.stmts:
            self.emit(indent, "pass")
        for k, c in enumerate(s.stmts):
            if isinstance(c, Allocate) and k < len(s.stmts) - 1:
                # Its scope ends before the list does: only the with form says so.
                self._allocate_with(c, indent)
            elif isinstance(c, DeclBuffer) and k < len(s.stmts) - 1:
                self.decl_with(c, indent)
            elif isinstance(c, LetStmt) and k < len(s.stmts) - 1:
                # Likewise: `x = v` would bind x for the statements after this one too.
                self._let_with(c, indent)
            else:
                self.stmt(c, indent)

    def _For(self, s: For, indent: int) -> None:
        bounds = self._loop_range(s)
        name = self.namer.bind(s.var)
        self.loops[s.var] = (s.min, s.extent)
        if s.kind.value in THREAD_KINDS and s.launched and self.spelling == "tirx" \
                and isinstance(s.min, IntImm) and s.min.value == 0:
            # TVM 0.27's lowered GPU text: a thread axis launched over the body.
            self.emit(indent, f'with T.launch_thread("{s.kind.value}", {bounds}) as {name}:')
        else:
            # TVM's hints on the loop, as read (For.annotations).
            hints = "" if s.annotations is None else \
                f", annotations={attr_text(s.annotations)}"
            if s.kind.value in THREAD_KINDS:
                self.emit(indent, f"for {name} in T.thread_binding({bounds}, "
                                  f'thread="{s.kind.value}"{hints}):')
            else:
                self.emit(indent, f"for {name} in T.{s.kind.value}({bounds}{hints}):")
        self.stmt(s.body, indent + 1)
        self.namer.unbind(s.var)

    def _loop_range(self, s: For) -> str:
        # Each form is one that parse_region.span_extent reads back to the same extent.
        m, e = s.min, s.extent
        if isinstance(m, IntImm) and m.value == 0 and m.dtype == e.dtype:
            return self.expr(e)
        if isinstance(m, IntImm) and isinstance(e, IntImm) and m.dtype == e.dtype:
            return f"{self.expr(m)}, {self.expr(IntImm(m.value + e.value, e.dtype))}"
        # A bare literal start takes the dtype of the stop, as in `T.serial(1, n)`.
        start = self.expr(m, e.dtype)
        if (isinstance(e, Sub) and e.b == m and not isinstance(e.a, IntImm)
                and not (isinstance(e.a, Add) and e.a.a == m)):
            return f"{start}, {self.expr(e.a)}"
        return f"{start}, {self.expr(Add(m, e))}"

    def _IfThenElse(self, s: IfThenElse, indent: int) -> None:
        self.emit(indent, f"if {self.expr(s.condition)}:")
        self.stmt(s.then_case, indent + 1)
        other = s.else_case
        while isinstance(other, IfThenElse):
            self.emit(indent, f"elif {self.expr(other.condition)}:")
            self.stmt(other.then_case, indent + 1)
            other = other.else_case
        if other is not None:
            self.emit(indent, "else:")
            self.stmt(other, indent + 1)

    def _BufferStore(self, s: BufferStore, indent: int) -> None:
        target = self.vector_store(s) or self._load_text(s.buffer, s.indices)
        self.emit(indent, f"{target} = {self.expr(s.value, s.buffer.dtype)}")

    def _LetStmt(self, s: LetStmt, indent: int) -> None:
        value = self.expr(s.value)
        if self.spelling == "tirx":
            # TVM 0.27 reads a plain `x = value` as an alias, not a let.
            self.emit(indent, f"{self.namer.bind(s.var)}: T.let[T.{s.var.dtype}] = {value}")
        else:
            self.emit(indent, f"{self.namer.bind(s.var)} = {value}")
        self.stmt(s.body, indent)
        self.namer.unbind(s.var)

    def _let_with(self, s: LetStmt, indent: int) -> None:
        self.emit(indent, f"with T.LetStmt({self.expr(s.value)}) as {self.namer.bind(s.var)}:")
        self.stmt(s.body, indent + 1)
        self.namer.unbind(s.var)

    def _Evaluate(self, s: Evaluate, indent: int) -> None:
        # A call (T.assume) reads as a statement; anything else keeps TVM's T.evaluate.
        text = self.expr(s.value)
        self.emit(indent, text if isinstance(s.value, Call) else f"T.evaluate({text})")

    def _allocate_with(self, s: Allocate, indent: int) -> None:
        args = self._buffer_args(s.buffer)
        self.emit(indent, f"with T.decl_buffer({args}) as {self.namer.bind(s.buffer)}:")
        self.stmt(s.body, indent + 1)
        self.namer.unbind(s.buffer)

    def _Allocate(self, s: Allocate, indent: int) -> None:
        args = self._buffer_args(s.buffer)
        alloc = (self.block_name("alloc") if any(s is a for a in self.root)
                 else "T.alloc_buffer")
        self.emit(indent, f"{self.namer.bind(s.buffer)} = {alloc}({args})")
        self.stmt(s.body, indent)
        self.namer.unbind(s.buffer)

    # ------------------------------------------------------------ expressions

    def expr(self, e: Expr, ctx: str | None = None) -> str:
        """``e`` as text; ``ctx`` is the dtype a bare literal here would take."""
        return self._expr(e, ctx)[0]

    @guarded
    def _expr(self, e: Expr, ctx: str | None = None) -> tuple[str, int]:
        """Text and precedence of ``e``."""
        method = getattr(self, "_e_" + type(e).__name__, None)
        if method is not None:
            return method(e, ctx)
        if isinstance(e, BinaryOp):
            return self._arith(e)
        if isinstance(e, Compare):
            a, b = self._operand(e.a, e.b, CMP + 1), self._operand(e.b, e.a, CMP + 1)
            return f"{a} {_CMP[type(e)]} {b}", CMP
        raise VerifyError(f"script() cannot print the expression {type(e).__name__}: "
                          "the IR is not well formed (pp.verify says where)")

    def _operand(self, x: Expr, sibling: Expr, need: int) -> str:
        """``x`` beside ``sibling``, parenthesized unless it binds at least ``need``."""
        text, prec = self._expr(x, None if _weak(sibling) else sibling.dtype)
        return f"({text})" if prec < need else text

    def _e_Var(self, e: Var, ctx):
        return self.namer.name(e), ATOM

    def _e_IntImm(self, e: IntImm, ctx):
        if e.dtype == (ctx or "int32"):
            return str(e.value), (ATOM if e.value >= 0 else UNARY)
        return f"T.{e.dtype}({e.value})", ATOM

    def _e_FloatImm(self, e: FloatImm, ctx):
        if not math.isfinite(e.value):
            return f'T.{e.dtype}("{e.value}")', ATOM
        if e.dtype in FLOAT_MAX and abs(e.value) == FLOAT_MAX[e.dtype]:
            # TVM's spelling of the dtype's finite extremes; reads back to this constant.
            return f'T.{"min" if e.value < 0 else "max"}_value("{e.dtype}")', ATOM
        text = repr(float(e.value))
        if e.dtype == (ctx or "float32"):
            return text, (UNARY if text.startswith("-") else ATOM)
        return f"T.{e.dtype}({text})", ATOM

    def _e_BoolImm(self, e: BoolImm, ctx):
        return str(bool(e.value)), ATOM

    def _arith(self, e: BinaryOp):
        if isinstance(e, (Min, Max)):
            name = "min" if isinstance(e, Min) else "max"
            return f"T.{name}({self._operand(e.a, e.b, 0)}, {self._operand(e.b, e.a, 0)})", ATOM
        if isinstance(e, Sub) and _is_zero(e.a) and not _weak(e.b) and e.a.dtype == e.b.dtype:
            return "-" + self._operand(e.b, e.a, UNARY), UNARY  # how `-x` parses
        if type(e) in _NODE_NAMES and all(_bare_int(x) for x in (e.a, e.b)):
            # `0 - 5` would read back as the literal -5 (TVMScript folds literals in
            # Python): TVM's spelling of the node keeps it one
            return f"T.{_NODE_NAMES[type(e)]}({e.a.value}, {e.b.value})", ATOM
        symbol, prec = _ARITH[type(e)]
        # Left-associative: only the right operand needs parens at equal precedence.
        a, b = self._operand(e.a, e.b, prec), self._operand(e.b, e.a, prec + 1)
        return f"{a} {symbol} {b}", prec

    def _e_And(self, e: And, ctx):
        a, b = e.a, e.b
        if (isinstance(a, Compare) and isinstance(b, Compare) and a.b == b.a
                and not _weak(a.b)):
            # `lo <= x and x < hi` is what `lo <= x < hi` parses to.
            lo, mid = self._operand(a.a, a.b, CMP + 1), self._operand(a.b, a.a, CMP + 1)
            hi = self._operand(b.b, b.a, CMP + 1)
            return f"{lo} {_CMP[type(a)]} {mid} {_CMP[type(b)]} {hi}", CMP
        return self._logical(e, "and", AND)

    def _e_Or(self, e: Or, ctx):
        return self._logical(e, "or", OR)

    def _logical(self, e, word: str, prec: int):
        a, ap = self._expr(e.a)
        b, bp = self._expr(e.b)
        a = f"({a})" if ap < prec else a
        b = f"({b})" if bp <= prec else b
        return f"{a} {word} {b}", prec

    def _e_Not(self, e: Not, ctx):
        text, prec = self._expr(e.a)
        return "not " + (f"({text})" if prec < NOT else text), NOT

    def _e_Select(self, e: Select, ctx):
        trunc = truncation(e)
        if trunc is not None:  # read from TVM's T.Div, T.truncmod: written back as such
            op, x, y = trunc
            return f"T.{op}({self.expr(x)}, {self.expr(y)})", ATOM
        c = self.expr(e.condition)
        call = "T.Select" if e.eager else "T.if_then_else"
        if self.spelling == "tirx":
            # TVM gives each branch its own dtype: a bare 0.0 is float32 beside a float16.
            return f"{call}({c}, {self.expr(e.true_value)}, " \
                   f"{self.expr(e.false_value)})", ATOM
        a, b = self._operand(e.true_value, e.false_value, 0), self._operand(
            e.false_value, e.true_value, 0)
        return f"{call}({c}, {a}, {b})", ATOM

    def _e_Cast(self, e: Cast, ctx):
        return f'T.Cast("{e.dtype}", {self.expr(e.value)})', ATOM

    def _e_BufferLoad(self, e: BufferLoad, ctx):
        return self._load_text(e.buffer, e.indices), ATOM

    def _load_text(self, buffer: Buffer, indices) -> str:
        inner = ", ".join(self.expr(i) for i in indices) if indices else "()"
        return f"{self.namer.name(buffer)}[{inner}]"

    def _e_Call(self, e: Call, ctx):
        if self.is_opaque(e):
            return self.opaque_call(e), ATOM
        if e.op == "undef":
            if not e.args and e.dtype == (ctx or "float32"):
                return "T.undef()", ATOM
            return f'T.undef(dtype="{e.dtype}")', ATOM
        if e.op in intrinsics.BITWISE_BINARY:
            # A bare literal takes its dtype from the other operand, as in parsing.
            a, b = e.args
            return f"T.{e.op}({self._operand(a, b, 0)}, {self._operand(b, a, 0)})", ATOM
        # Math arguments are read as float32 unless written otherwise.
        arg_ctx = "float32" if e.op in intrinsics.ALL and e.op not in intrinsics.SPECIAL else None
        args = ", ".join(self.expr(a, arg_ctx) for a in e.args)
        return f"T.{e.op}({args})", ATOM

    def _e_Let(self, e: Let, ctx):
        value = self.expr(e.value)
        name = self.namer.bind(e.var)
        body = self.expr(e.body)
        self.namer.unbind(e.var)
        return f"T.let({name}, {value}, {body})", ATOM
