"""TVM's lowered cross-thread reduction, read into a :class:`~polypad.ir.nodes.ThreadAllReduce`.

``LowerCrossThreadReduction`` writes a reduction whose loop is bound to a
thread axis as::

    with T.attr(T.comm_reducer(lambda x0, y0: T.min(x0, y0), [T.float32(3.4e38)]),
                "reduce_scope", 0):
        T.tvm_thread_allreduce(T.uint32(1), x[i, tx], T.bool(True), red[0], tx)

(two values for an argmax: ``lambda x0, x1, y0, y1: (r0, r1)``, ``[id0, id1]``,
``T.uint32(2), v0, v1, cond, red0[0], red1[0], tx``).  The attribute and the
call are one statement in polypad; anything else under ``"reduce_scope"``, or
a ``T.comm_reducer`` elsewhere, is refused at its line and column.
"""

from __future__ import annotations

import ast

from ..ir import dtypes
from ..ir.nodes import (
    BufferData,
    BufferLoad,
    CommReducer,
    Expr,
    IntImm,
    ThreadAllReduce,
    Var,
)
from .source import Source, call_name, string_arg

_CALL = "T.tvm_thread_allreduce"


def is_reduce_scope(call: ast.expr) -> bool:
    """Whether ``call`` is ``T.attr(T.comm_reducer(...), ...)``."""
    return (isinstance(call, ast.Call) and call_name(call) == "T.attr" and bool(call.args)
            and call_name(call.args[0]) == "T.comm_reducer")


def thread_allreduce(src: Source, exprs, node: ast.With, env: dict) -> ThreadAllReduce:
    """``with T.attr(T.comm_reducer(...), "reduce_scope", v): T.tvm_thread_allreduce(...)``."""
    call = node.items[0].context_expr
    if len(call.args) != 3 or call.keywords:
        raise src.error(call, 'a reducer\'s attribute is T.attr(T.comm_reducer(...), '
                              '"reduce_scope", 0)')
    reducer_node, key, scope_node = call.args
    if string_arg(src, key, "an attribute key") != "reduce_scope":
        raise src.error(key, 'T.comm_reducer is the node of a "reduce_scope" attribute only')
    reducer = comm_reducer(src, exprs, reducer_node, env)
    scope = exprs.expr(scope_node, env)
    body = node.body
    if not (len(body) == 1 and isinstance(body[0], ast.Expr)
            and call_name(body[0].value) == _CALL):
        raise src.error(body[0], f'the body of a "reduce_scope" attribute is one {_CALL}(...)')
    allreduce = body[0].value
    if allreduce.keywords:
        raise src.error(allreduce.keywords[0], f"{_CALL} takes no keyword arguments")
    args = allreduce.args
    count = len(reducer.identities)
    if not args:
        raise src.error(allreduce, f"{_CALL} starts with the number of values, T.uint32(n)")
    first = exprs.expr(args[0], env)
    if not (isinstance(first, IntImm) and first.value == count):
        raise src.error(args[0], f"{_CALL} combines {count} value(s), as its reducer does: "
                                 f"it starts with T.uint32({count})")
    if len(args) < 3 + 2 * count:
        raise src.error(allreduce, f"{_CALL}(T.uint32({count}), {count} value(s), condition, "
                                   f"{count} result element(s), thread variables...)")
    values = tuple(exprs.expr(a, env) for a in args[1:1 + count])
    for k, (v, ident) in enumerate(zip(values, reducer.identities)):
        if v.dtype != ident.dtype:
            raise src.error(args[1 + k], f"value {k} of {_CALL} is {v.dtype}, its reducer's "
                                         f"identity {ident.dtype}")
    condition = exprs.cond(args[1 + count], env)
    targets = tuple(_target(src, exprs, a, env) for a in args[2 + count:2 + 2 * count])
    for k, (t, ident) in enumerate(zip(targets, reducer.identities)):
        dtype = t.buffer.dtype
        if dtype != ident.dtype:
            raise src.error(args[2 + count + k], f"result {k} of {_CALL} goes to a {dtype} "
                                                 f"buffer, its reducer's identity is "
                                                 f"{ident.dtype}")
    threads = []
    for a in args[2 + 2 * count:]:
        var = env.get(a.id) if isinstance(a, ast.Name) else None
        if not isinstance(var, Var):
            raise src.error(a, f"the last arguments of {_CALL} are the thread variables it "
                               "reduces over")
        threads.append(var)
    return ThreadAllReduce(reducer, values, condition, targets, tuple(threads), scope,
                           span=src.span(node))


def comm_reducer(src: Source, exprs, node: ast.expr, env: dict) -> CommReducer:
    """``T.comm_reducer(lambda x0, ..., y0, ...: results, [identities])``."""
    if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], ast.Lambda) \
            or not isinstance(node.args[1], (ast.List, ast.Tuple)):
        raise src.error(node, "T.comm_reducer takes a lambda and a list of identities: "
                              "T.comm_reducer(lambda x, y: x + y, [T.float32(0)])")
    fn, ident_nodes = node.args
    identities = tuple(exprs.expr(e, env) for e in ident_nodes.elts)
    count = len(identities)
    params = fn.args
    names = [a.arg for a in params.args]
    if (params.posonlyargs or params.vararg or params.kwonlyargs or params.kwarg
            or params.defaults or count == 0 or len(names) != 2 * count):
        raise src.error(fn, f"the lambda of T.comm_reducer takes {2 * count} plain "
                            f"parameters for {count} identities: the left values, then "
                            "the right ones")
    lhs = tuple(Var(x, i.dtype) for x, i in zip(names[:count], identities))
    rhs = tuple(Var(y, i.dtype) for y, i in zip(names[count:], identities))
    inner = {**env, **{v.name: v for v in lhs + rhs}}
    parts = fn.body.elts if isinstance(fn.body, ast.Tuple) and count > 1 else [fn.body]
    if len(parts) != count:
        raise src.error(fn.body, f"the lambda of T.comm_reducer gives {count} results, "
                                 "as a tuple when more than one")
    results = []
    for part, ident in zip(parts, identities):
        value = exprs.expr(part, inner, ident.dtype)
        if value.dtype != ident.dtype or dtypes.lanes(value.dtype) != 1:
            raise src.error(part, f"a result of T.comm_reducer is {value.dtype}, its "
                                  f"identity {ident.dtype}")
        results.append(value)
    return CommReducer(lhs, rhs, tuple(results), identities)


def _target(src: Source, exprs, node: ast.expr, env: dict) -> Expr:
    target = exprs.expr(node, env)
    if isinstance(target, BufferData):  # the older spelling: the buffer's first element
        return BufferLoad(target.buffer, tuple(IntImm(0) for _ in target.buffer.shape))
    if not isinstance(target, BufferLoad):
        raise src.error(node, f"a result of {_CALL} goes to a buffer element, as red[0]")
    return target
