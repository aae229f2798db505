"""Printing TVM's lowered constructs: vectors, views, opaque calls and statements.

Mixed into the printer (:mod:`.printer`); each form is one that
:mod:`.parse_lowered`, :mod:`.parse_view` and :mod:`.parse_packed` read back
to the same IR:

- ``T.Ramp(b, s, 4)``, ``T.Broadcast(v, 4)``; a vector store as TVM writes
  it, ``C[b:b + 4] = v`` (``C[b:b + 16:4]`` with a stride);
- a view, ``X = T.decl_buffer(shape, dtype, data=A.data, elem_offset=k)``
  (``with ... as X:`` when its scope ends before its list does); a buffer
  over no memory, ``X = T.Buffer(shape, dtype)``;
- a cross-thread reduction, ``with T.attr(T.comm_reducer(lambda x0, y0: x0 + y0,
  [T.float32(0)]), "reduce_scope", 0):`` over its ``T.tvm_thread_allreduce(...)``;
- ``with T.attr(node, "key", value):`` (TVM's dict form ``with
  T.attr({"key": value}):`` when the node is 0), ``assert c, message``,
  ``return v``;
- an opaque call with ``dtype=`` only where its arguments do not imply it;
- attribute values: lists, dicts, ``T.target(...)``.
"""

from __future__ import annotations

import json

from ..ir import dtypes
from ..ir.attr_values import AttrCall, AttrMap
from ..ir.nodes import (
    NO_DATA,
    Add,
    Assert,
    AttrStmt,
    BoolImm,
    Broadcast,
    Buffer,
    BufferData,
    BufferLoad,
    BufferStore,
    Call,
    DeclBuffer,
    IntImm,
    Ramp,
    Return,
    StringImm,
    ThreadAllReduce,
)
from ..ir.opaque import OPAQUE, implied_dtype
from ..ir.visitor import walk

ATOM = 8  # the printer's precedence of an atom


def attr_text(value) -> str:
    """An attribute value as script text (a tuple is TVM's list)."""
    if isinstance(value, tuple):
        return "[" + ", ".join(attr_text(v) for v in value) + "]"
    if isinstance(value, AttrMap):
        return "{" + ", ".join(f"{json.dumps(k)}: {attr_text(v)}" for k, v in value.items) + "}"
    if isinstance(value, AttrCall):
        parts = [attr_text(a) for a in value.args]
        parts += [f"{k}={attr_text(v)}" for k, v in value.kwargs]
        return f"T.{value.name}({', '.join(parts)})"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _uses(body, buffer: Buffer) -> bool:
    """Whether ``body`` names ``buffer`` (an access, ``.data``, a view of it, T.attr)."""
    for x in walk(body):
        if isinstance(x, (BufferLoad, BufferStore, BufferData)) and x.buffer is buffer:
            return True
        if isinstance(x, DeclBuffer) and x.buffer.data is buffer:
            return True
        if isinstance(x, AttrStmt):
            parts = x.node if isinstance(x.node, tuple) else (x.node,)
            if any(p is buffer for p in parts):
                return True
    return False


class LoweredPrinter:
    """Printer methods for TVM's lowered constructs (a mixin of the printer)."""

    # ------------------------------------------------------------ expressions

    def _e_Ramp(self, e: Ramp, ctx):
        return f"T.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})", ATOM

    def _e_Broadcast(self, e: Broadcast, ctx):
        return f"T.Broadcast({self.expr(e.value)}, {e.lanes})", ATOM

    def _e_StringImm(self, e: StringImm, ctx):
        return json.dumps(e.value), ATOM

    def _e_BufferData(self, e: BufferData, ctx):
        return f"{self.namer.name(e.buffer)}.data", ATOM

    def opaque_call(self, e: Call) -> str:
        """``T.tvm_struct_get(a, 0, 13, "int32")``, ``T.call_extern("f", dtype="handle")``."""
        if e.op == "type_annotation":
            return f"T.handle({', '.join(self.expr(a) for a in e.args)}).ty"
        args = [self.expr(a) for a in e.args]
        if implied_dtype(e.op, e.args) != e.dtype:
            args.append(f'dtype="{e.dtype}"')
        return f"T.{e.op}({', '.join(args)})"

    def is_opaque(self, e: Call) -> bool:
        return e.op in OPAQUE

    # ------------------------------------------------------------ statements

    def vector_store(self, s: BufferStore) -> str | None:
        """``C[b:b + 4]`` for a store whose index is a constant-stride Ramp, else None."""
        if not any(isinstance(i, Ramp) for i in s.indices):
            return None
        parts = []
        for index in s.indices:
            if not isinstance(index, Ramp):
                if dtypes.lanes(index.dtype) > 1:
                    return None
                parts.append(self.expr(index))
                continue
            stride = index.stride
            if not (isinstance(stride, IntImm) and stride.value > 0):
                return None
            length = IntImm(index.lanes * stride.value, index.base.dtype)
            base = index.base
            stop = self.expr(IntImm(base.value + length.value, base.dtype)
                             if isinstance(base, IntImm) else Add(base, length))
            step = "" if stride.value == 1 else f":{stride.value}"
            parts.append(f"{self.expr(index.base)}:{stop}{step}")
        return f"{self.namer.name(s.buffer)}[{', '.join(parts)}]"

    def decl_text(self, b: Buffer) -> str:
        """The call declaring ``b``: over another buffer's memory, a pointer, or nothing."""
        if b.data == NO_DATA:
            return f"T.Buffer({self._buffer_args(b)})"
        args = self._buffer_args(b)
        if isinstance(b.data, Buffer):
            if b.scope == b.data.scope and b.scope != "global":
                args = args.replace(f", scope={json.dumps(b.scope)}", "")
            args += f", data={self.namer.name(b.data)}.data"
            if b.elem_offset is not None:
                args += f", elem_offset={self.expr(b.elem_offset)}"
        else:
            args += f", data={self.expr(b.data)}"
        return f"T.decl_buffer({args})"

    def _bind_declared(self, s: DeclBuffer) -> str:
        # TVM's text declares a buffer again under its name (a packed function's A,
        # over its argument's pointer): keep the name while nothing inside names the first.
        return self.namer.bind(s.buffer, may_shadow=lambda other: not (
            isinstance(other, Buffer) and (_uses(s.body, other) or other is s.buffer.data)))

    def _DeclBuffer(self, s: DeclBuffer, indent: int) -> None:
        text = self.decl_text(s.buffer)
        self.emit(indent, f"{self._bind_declared(s)} = {text}")
        self.stmt(s.body, indent)
        self.namer.unbind(s.buffer)

    def decl_with(self, s: DeclBuffer, indent: int) -> None:
        """``with T.decl_buffer(..., data=A.data) as X:``: a view whose scope ends early."""
        text = self.decl_text(s.buffer)
        self.emit(indent, f"with {text} as {self._bind_declared(s)}:")
        self.stmt(s.body, indent + 1)
        self.namer.unbind(s.buffer)

    def _AttrStmt(self, s: AttrStmt, indent: int) -> None:
        value = self.expr(s.value)
        if isinstance(s.node, IntImm) and s.node.value == 0 and s.node.dtype == "int32":
            self.emit(indent, f"with T.attr({{{json.dumps(s.key)}: {value}}}):")
        else:
            self.emit(indent, f"with T.attr({self._attr_node(s.node)}, "
                              f"{json.dumps(s.key)}, {value}):")
        self.stmt(s.body, indent + 1)

    def _ThreadAllReduce(self, s: ThreadAllReduce, indent: int) -> None:
        r = s.reducer
        # A list element takes Python's types in TVM's parser: a bare float is no float32.
        identities = ", ".join(self.expr(e, "int32") for e in r.identities)
        params = [self.namer.bind(v) for v in r.lhs + r.rhs]
        results = [self.expr(e) for e in r.results]
        for v in r.lhs + r.rhs:
            self.namer.unbind(v)
        result = results[0] if len(results) == 1 else f"({', '.join(results)})"
        reducer = f"T.comm_reducer(lambda {', '.join(params)}: {result}, [{identities}])"
        self.emit(indent, f'with T.attr({reducer}, "reduce_scope", {self.expr(s.scope)}):')
        args = [f"T.uint32({len(s.values)})", *(self.expr(v) for v in s.values),
                self._bool_arg(s.condition), *(self.expr(t) for t in s.targets),
                *(self.namer.name(v) for v in s.threads)]
        self.emit(indent + 1, f"T.tvm_thread_allreduce({', '.join(args)})")

    def _bool_arg(self, e) -> str:
        # TVM's own spelling of a literal condition: T.bool(True).
        return f"T.bool({e.value})" if isinstance(e, BoolImm) else self.expr(e)

    def _attr_node(self, node) -> str:
        if isinstance(node, Buffer):
            return self.namer.name(node)
        if isinstance(node, tuple):
            return "[" + ", ".join(self._attr_node(x) for x in node) + "]"
        if isinstance(node, AttrCall):
            return attr_text(node)
        return self.expr(node)

    def _Assert(self, s: Assert, indent: int) -> None:
        tail = f", {s.message}" if s.message else ""
        self.emit(indent, f"assert {self.expr(s.condition)}{tail}")

    def _Return(self, s: Return, indent: int) -> None:
        self.emit(indent, f"return {self.expr(s.value)}")
