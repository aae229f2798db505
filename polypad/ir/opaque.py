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

from .nodes import Call, Expr, Stmt
from .visitor import walk

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
    return isinstance(expr, Call) and expr.op in OPAQUE


def first_opaque(node: Expr | Stmt):
    """The first opaque call, attribute, assert or return under ``node`` (or None)."""
    from .nodes import Assert, AttrStmt, Return

    for x in walk(node):
        if is_opaque(x) or isinstance(x, (AttrStmt, Assert, Return)):
            return x
    return None
