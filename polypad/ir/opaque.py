"""TVM intrinsics polypad reads, prints and keeps, but cannot run or analyse.

A packed function's scaffolding (``T.tvm_struct_get``, ``T.isnullptr``),
external calls (``T.call_extern``) and tensor-core fragment operations
(``T.tvm_fill_fragment``) have no meaning polypad could execute: they read
and write memory it does not see.  They are :class:`~.nodes.Call` nodes
whose ``op`` is listed in :data:`OPAQUE`; building a function that holds one
is refused by name, and the deciders answer ``Unknown`` naming it.

Each intrinsic says how its result dtype is written when ``dtype=`` is left
out, so that the printer writes ``dtype=`` only where TVM's text does:
``"last"`` (the last argument names it: ``T.tvm_struct_get(a, 0, 13,
"int32")``), ``"first"`` (the first: ``T.reinterpret("float32", x)``,
``T.call_extern("float32", "f", x)``), or a fixed dtype.  The naming
argument stays an argument, as written: a string, or a type such as
``T.handle("float32").ty`` (a ``type_annotation`` call, of dtype handle).
"""

from __future__ import annotations

from dataclasses import dataclass

from .nodes import Call, Expr, PrimFunc, Span, Stmt
from .visitor import children, walk

_TENSOR_CORE = ("tvm_fill_fragment", "tvm_load_matrix_sync", "tvm_store_matrix_sync",
                "tvm_mma_sync", "tvm_bmma_sync")
_EXTERN = ("call_extern", "call_pure_extern", "call_packed", "call_cpacked",
           "call_llvm_intrin", "call_llvm_pure_intrin")

#: intrinsic -> how its dtype is given without ``dtype=`` (see the module docstring).
OPAQUE: dict[str, str] = {
    "tvm_struct_get": "last",
    "tvm_struct_set": "int32",
    "isnullptr": "bool",
    "reinterpret": "first",
    "handle_add_byte_offset": "handle",
    "address_of": "handle",
    "tvm_access_ptr": "handle",
    "tvm_tuple": "handle",
    "tvm_stack_alloca": "handle",
    "tvm_stack_make_shape": "handle",
    "tvm_stack_make_array": "handle",
    "tvm_call_packed": "int32",
    "tvm_call_cpacked": "int32",
    "tvm_thread_allreduce": "handle",
    "lookup_param": "handle",
    "start_profile_intrinsic": "handle",
    "end_profile_intrinsic": "handle",
    "type_annotation": "handle",  # ``T.handle("float32").ty``: a type as an argument
    **{op: "handle" for op in _TENSOR_CORE},
    **{op: "first" for op in _EXTERN},
    # TVM's T.call_packed("f", ...) names the function first and has no dtype argument:
    # its value is the int32 status, as TVM types it.
    "call_packed": "int32",
    "call_cpacked": "int32",
}


def implied_dtype(op: str, args: tuple[Expr, ...]) -> str | None:
    """The dtype ``T.<op>(args)`` has without ``dtype=``, or None if nothing says."""
    from . import dtypes
    from .nodes import StringImm

    rule = OPAQUE[op]
    if rule not in ("first", "last"):
        return rule
    if not args:
        return None
    named = args[0] if rule == "first" else args[-1]
    if isinstance(named, StringImm) and (dtypes.is_valid(named.value)
                                         or dtypes.is_vector(named.value)):
        return named.value
    if isinstance(named, Call) and named.op == "type_annotation":
        return "handle"
    return None


def is_opaque(expr: Expr) -> bool:
    """True for a call of an intrinsic polypad keeps but cannot run."""
    return isinstance(expr, Call) and expr.op in OPAQUE and not is_value_bitcast(expr)


def is_value_bitcast(expr: Expr) -> bool:
    """True for ``T.reinterpret("float32", x)`` of a scalar number ``x`` of as many bits
    (``fast_exp``'s ``2 ** n`` built in the exponent bits): the executors run it, as
    numpy's ``view``.  A pointer's reinterpret stays opaque."""
    from . import dtypes
    from .nodes import StringImm

    if not (isinstance(expr, Call) and expr.op == "reinterpret" and len(expr.args) == 2
            and isinstance(expr.args[0], StringImm) and expr.args[0].value == expr.dtype):
        return False
    src, dst = expr.args[1].dtype, expr.dtype

    def numeric(d: str) -> bool:
        return dtypes.is_valid(d) and (dtypes.is_int(d) or dtypes.is_float(d))

    return numeric(src) and numeric(dst) and dtypes.bits(src) == dtypes.bits(dst)


@dataclass(frozen=True)
class OpaqueSite:
    """A construct polypad keeps but cannot run or model: what it is, why, and where."""

    what: str
    why: str
    span: Span | None

    def __str__(self) -> str:
        where = f" at line {self.span.line}" if self.span is not None else ""
        return f"{self.what}{where} {self.why}"


_WHY_CALL = "is an opaque TVM intrinsic: its effect on memory is unknown to polypad"
# Every target runs a plain assert; one whose condition reads memory or a pointer is
# the packed function's own scaffolding, which no target runs nor the model holds.
_WHY_ASSERT = ("is a check whose condition reads a buffer, a pointer or an opaque call "
               "itself, which polypad neither runs nor models (it runs and models an "
               "assert on scalar values, a let's value loaded from a buffer included)")


def first_check(stmt: Stmt):
    """The first ``assert`` in ``stmt`` (``stmt`` itself, or one under it) in program
    order, or None."""
    from .nodes import Assert

    return next((x for x in walk(stmt) if isinstance(x, Assert)), None)


def check_text(check) -> str:
    """How a message names an ``assert``: ```assert n < 8` at line 6`` (the line where
    known)."""
    from .show import show

    line = f" at line {check.span.line}" if check.span is not None else ""
    return f"`assert {show(check.condition)}`{line}"


def is_plain_check(stmt: Stmt) -> bool:
    """Whether ``stmt`` is an ``assert`` on plain values: its condition reads no buffer,
    pointer or opaque intrinsic (``assert n == 128, ...``).  The analyses read it as a
    fact for what follows it (``checks_as_facts`` of
    :func:`first_opaque`, :mod:`polypad.ir.stated`); it is still a check that may raise."""
    from . import dtypes
    from .nodes import Assert, BufferData, BufferLoad, StringImm, Var

    if not isinstance(stmt, Assert) or not dtypes.is_bool(stmt.condition.dtype):
        return False
    return not any(is_opaque(x) or isinstance(x, (BufferLoad, BufferData, StringImm))
                   or (isinstance(x, Var) and x.dtype == "handle")
                   or (isinstance(x, Call) and x.op == "undef")
                   for x in walk(stmt.condition))


def first_opaque(func: PrimFunc, *, checks_as_facts: bool = False) -> OpaqueSite | None:
    """The first construct of ``func``, in program order, that polypad cannot run or
    model: a pointer parameter, an opaque intrinsic, ``T.attr``, ``assert``,
    ``return``, or a buffer over memory polypad does not know.  None if there is none.

    With ``checks_as_facts`` (the model and the analyses built on it, which hold an
    assert on plain values as a check that may raise and a fact for what follows
    it), an assert on plain values (:func:`is_plain_check`) is not one.
    """
    from .nodes import Assert, AttrStmt, DeclBuffer, Return, ThreadAllReduce, Var
    from .views import owns_unknown_memory

    stack = [func.body]
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ThreadAllReduce):
            return OpaqueSite("T.tvm_thread_allreduce", "is a cross-thread reduction, which "
                              "the analyses do not model (codegen.lower writes it as loops "
                              "and stores: polypad.semantics.lower_allreduce)", stmt.span)
        if isinstance(stmt, AttrStmt):
            return OpaqueSite(f"T.attr(..., {stmt.key!r}, ...)", "is an annotation polypad "
                              "does not interpret", stmt.span)
        if isinstance(stmt, Assert) and not (checks_as_facts and is_plain_check(stmt)):
            return OpaqueSite("assert", _WHY_ASSERT, stmt.span)
        if isinstance(stmt, Return):
            return OpaqueSite("return", "ends a packed function, which polypad does not "
                              "run", stmt.span)
        if isinstance(stmt, DeclBuffer) and owns_unknown_memory(stmt.buffer):
            return OpaqueSite(f"buffer {stmt.buffer.name!r}", "is declared over memory "
                              "polypad does not know (a pointer, or none)", stmt.span)
        nested = []
        for child in children(stmt):
            if isinstance(child, Stmt):
                nested.append(child)
                continue
            for x in walk(child):
                if is_opaque(x):
                    return _call_site(x, stmt.span)
        stack.extend(reversed(nested))
    for p in func.params:
        if isinstance(p, Var) and p.dtype == "handle":
            return OpaqueSite(f"the T.handle parameter {p.name!r}", "is a pointer polypad "
                              "does not follow (it runs and models buffers and scalars)", None)
    return None


def _call_site(call: Call, span: Span | None) -> OpaqueSite:
    """Where an opaque call is, naming the runtime function a packed call makes (TOPI's
    ``sort`` is ``T.call_packed("tvm.contrib.sort.sort", ...)``)."""
    from .nodes import StringImm

    named = call.args[0] if call.args and isinstance(call.args[0], StringImm) else None
    widths = _bitcast_widths(call)
    if widths is not None:  # a value bit cast, but not between numbers of one width
        (src, src_bits), (dst, dst_bits) = widths
        return OpaqueSite(f'T.reinterpret("{dst}", <{src}>)', f"reads the bits of a "
                          f"{src_bits}-bit {src} as a {dst_bits}-bit {dst}: the widths "
                          "differ, and polypad runs a value bit cast only between numbers "
                          f"of one width (cast to a {dst_bits}-bit number first)", span)
    if call.op in ("call_packed", "call_cpacked") and named is not None:
        return OpaqueSite(f'T.{call.op}("{named.value}", ...)', "calls a function of TVM's "
                          "runtime, which polypad does not have: its effect on memory is "
                          "unknown to polypad", span)
    return OpaqueSite(f"T.{call.op}", _WHY_CALL, span)


def _bitcast_widths(call: Call) -> tuple[tuple[str, int], tuple[str, int]] | None:
    """The dtypes and widths of a scalar number's ``T.reinterpret`` to a number of another
    width, or None for any other call."""
    from . import dtypes

    if call.op != "reinterpret" or len(call.args) != 2:
        return None
    src, dst = call.args[1].dtype, call.dtype

    def numeric(d: str) -> bool:
        return dtypes.is_valid(d) and (dtypes.is_int(d) or dtypes.is_float(d))

    if not (numeric(src) and numeric(dst)) or dtypes.bits(src) == dtypes.bits(dst):
        return None
    return (src, dtypes.bits(src)), (dst, dtypes.bits(dst))


def first_alias_or_vector(func: PrimFunc) -> OpaqueSite | None:
    """The first view (a buffer over another's memory) or vector statement of ``func``:
    what the model sees through but the value analyses (the prover and the no-op rules
    built on it) do not.  None if there is none."""
    from . import dtypes
    from .nodes import BufferStore, DeclBuffer, LetStmt
    from .views import is_view

    for x in walk(func.body):
        if isinstance(x, DeclBuffer) and is_view(x.buffer):
            return OpaqueSite(f"view {x.buffer.name!r} of {x.buffer.data.name!r}",
                              "shares memory with another buffer, which the value "
                              "analyses do not follow", x.span)
        if isinstance(x, (BufferStore, LetStmt)) and dtypes.lanes(x.value.dtype) > 1:
            return OpaqueSite("a vector statement", "computes several lanes at once, which "
                              "the value analyses do not follow", x.span)
    return None
