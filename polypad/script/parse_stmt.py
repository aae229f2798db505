"""Script statements to IR statements.

A statement list is read front to back.  ``x = value`` and ``X =
T.alloc_buffer(...)`` bind a name for *the rest of the list*, so they
become a ``LetStmt`` or ``Allocate`` whose body is everything after them;
a later ``x = ...`` binds a new variable that shadows the first.  Names
bound inside a loop or branch body end with that body.
"""

from __future__ import annotations

import ast

from ..errors import TooDeepError
from ..ir import dtypes
from ..ir import operators as ops
from ..ir.attr_values import AttrMap
from ..ir.deep import guarded
from ..ir.nodes import (
    Allocate,
    Block,
    Buffer,
    BufferStore,
    DeclBuffer,
    Evaluate,
    Expr,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    LetStmt,
    SeqStmt,
    Stmt,
    Var,
)
from .checks import BlockAxes
from .derive_header import derive_header
from .parse_alloc import allocate, decl_buffer
from .parse_allreduce import is_reduce_scope, thread_allreduce
from .parse_attrs import attr_value
from .parse_block import BlockScope, axis_bindings, block_attr, init_condition, lets, where
from .parse_buffer import alloc_buffer
from .parse_expr import BINOPS, ExprParser, resolve
from .parse_packed import PackedStmts, let_annotation
from .parse_region import View, span_extent
from .parse_thread import env_thread, launch_thread, thread_binding
from .parse_view import declare, declares, view_method
from .source import (
    Source,
    bind_args,
    call_name,
    describe,
    string_arg,
    symbolic_declaration,
    symbolic_targets,
)
from .unsupported import refusal, tuple_refusal

_LOOP_KINDS = {
    "T.serial": ForKind.SERIAL, "range": ForKind.SERIAL, "T.parallel": ForKind.PARALLEL,
    "T.vectorized": ForKind.VECTORIZED, "T.unroll": ForKind.UNROLL,
}


# Block-dialect statements: the regions a block declares (checked against its body),
# and attributes, which steer only TVM's own schedules; both go to the block's header.
_BLOCK_FACTS = ("T.reads", "T.writes", "T.block_attr")

# Statements that allocate (or declare) a buffer for the rest of their list.
_ALLOCATIONS = ("T.alloc_buffer", "T.decl_buffer", "T.Buffer", "T.alloc_local",
                "T.alloc_shared")


def seq(stmts: list[Stmt]) -> Stmt:
    """One statement as itself, several (or none) as a SeqStmt."""
    return stmts[0] if len(stmts) == 1 else SeqStmt(tuple(stmts))


def is_docstring(node: ast.stmt) -> bool:
    """A bare string statement: documentation, not code."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


class StmtParser(PackedStmts):
    """Turns statement lists into IR, with an :class:`ExprParser` for expressions."""

    def __init__(self, src: Source, exprs: ExprParser):
        self.src = src
        self.exprs = exprs
        self.blocks: list[BlockScope] = []  # the with T.block(...) statements we are in
        # (block, T.reads, T.writes) of each block that declares regions, checked once the
        # whole function is read (checks.check_blocks).
        self.declared: list = []
        # The axis domains of each block, checked once the whole function is read
        # (checks.check_blocks).
        self.axes: list[BlockAxes] = []
        self.unnamed = 0  # unnamed blocks so far in this function
        self.loops: dict = {}  # loop Var -> (min, extent): the domain of a T.axis.remap
        self.symbolic = None  # the function's parse_symbolic.Symbolic
        # (ids of the function body's top-level statements, match(node, env) -> Buffer):
        # a T.match_buffer of a handle parameter there, after other statements.
        self.late_match = (frozenset(), None)

    @guarded
    def body(self, stmts: list[ast.stmt], env: dict) -> Stmt:
        """The IR of a statement list (a function, loop or branch body)."""
        out: list[Stmt] = []
        for k, node in enumerate(stmts):
            if is_docstring(node):
                continue
            binding = self._binding(node, env, stmts[k + 1:])
            if binding is not None:
                make, bound = binding
                if make is None:  # binds names but makes no IR (T.allocate, T.reads)
                    env = {**env, **bound}
                    continue
                out.append(make(self.body(stmts[k + 1:], {**env, **bound})))
                break
            out.append(self.stmt(node, env))
        return seq(out)

    @guarded
    def stmt(self, node: ast.stmt, env: dict) -> Stmt:
        """The IR of one statement that binds no name."""
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.src.error(node, f"{describe(node)} is not supported in polypad script")
        try:
            return method(node, env)
        except TooDeepError as err:  # the innermost statement names the place
            raise self.src.error(node, f"this statement is nested too deeply: {err}") from None

    # ------------------------------------------------------------ bindings

    def _binding(self, node: ast.stmt, env: dict, after: list[ast.stmt]):
        """(make(rest) -> Stmt, {name: bound}) for a statement that scopes the rest, else None.

        ``make`` is None for a statement that binds names but makes no IR.

        ``after`` is the rest of the statement list: what a binding's scope is.
        """
        found = self._block_statement(node, env)
        if found is not None:
            return found
        if isinstance(node, ast.Expr) and call_name(node.value) == "T.launch_thread":
            # T.launch_thread(tx, n): the rest of the list runs for each tx.
            var, make = launch_thread(self.src, node.value, None, self.exprs, env)
            return make, {var.name: var}
        if isinstance(node, ast.Expr) and call_name(node.value) == "T.attr":
            # T.attr(node, key, value): an annotation of the rest of the list.
            return self.attr(node.value, env, self.src.span(node)), {}
        targets = symbolic_targets(node)
        if targets is not None and len(targets) > 1:  # n, m = T.int32(), T.int32()
            return None, {t.id: self.symbolic.declare_inner(t, d) for t, d in targets}
        found = self._name_binding(node, env, after)
        if found is not None:
            make, name, bound = found
            return make, {name: bound}
        return None

    def _block_statement(self, node: ast.stmt, env: dict):
        """The block dialect's axes, ``T.where`` and the dropped ``T.reads``/``T.writes``."""
        span = self.src.span(node)
        block = self.blocks[-1] if self.blocks else None
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and (call_name(node.value) or "").startswith("T.axis.")):
            pairs = axis_bindings(self.src, node, self.exprs, env, block)
            if id(node) in block.top:
                block.bindings += pairs
            return lets(pairs, span), {var.name: var for var, _ in pairs}
        fn = call_name(node.value) if isinstance(node, ast.Expr) else None
        if fn in _BLOCK_FACTS:
            if block is None:
                raise self.src.error(node, f"{fn} must stand inside a with T.block(...) "
                                           "statement")
            if fn == "T.block_attr":
                block_attr(self.src, node.value, block)
            else:
                block.declare(self.src, node, fn, self.exprs, env)
            return None, {}
        if fn == "T.where":
            if block is None:
                raise self.src.error(node, "T.where must stand inside a with T.block(...) "
                                           "statement")
            (c,) = bind_args(self.src, node.value, fn, ("predicate",), 1)
            cond = self.exprs.cond(c, env)
            block.predicate(cond)
            return where(cond, span), {}
        return None

    def _name_binding(self, node: ast.stmt, env: dict, after: list[ast.stmt]):
        """(make(rest) -> Stmt, name, bound) for a statement that binds one name."""
        span = self.src.span(node)
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and node.value is not None):
            # x: T.let[T.int32] = v (TVM 0.27), x: T.int32 = v, p: T.handle("int32") = v
            name = node.target.id
            dtype = let_annotation(self.src, node.annotation)
            value = self.exprs.expr(node.value, env, dtype)
            if value.dtype != dtype:
                raise self.src.error(node.value, f"{name} is declared {dtype} but its value "
                                                 f"is {value.dtype}")
            var = Var(name, dtype)
            return (lambda rest: LetStmt(var, value, rest, span=span)), name, var
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            name = node.targets[0].id
            fn = call_name(node.value)
            view = (view_method(self.src, node.value, name, env)
                    if isinstance(node.value, ast.Call) else None)
            if view is not None:  # A_1 = A.view(3072)
                return (lambda rest: DeclBuffer(view, rest, span=span)), name, view
            if fn in ("T.decl_buffer", "T.Buffer") and declares(node.value, fn, env):
                # A view of a buffer's memory, or a buffer over a pointer (packed
                # functions rebind a parameter's name this way).
                buffer = declare(self.src, node.value, fn, name, env, self.exprs)
                return (lambda rest: DeclBuffer(buffer, rest, span=span)), name, buffer
            if fn in _ALLOCATIONS:
                if isinstance(env.get(name), (Buffer, View)):
                    raise self.src.error(node.targets[0], f"the buffer name {name!r} is "
                                                          "already in use here")
                if fn in ("T.alloc_buffer", "T.alloc_local", "T.alloc_shared"):
                    call = node.value
                    if fn != "T.alloc_buffer":  # T.alloc_buffer(..., scope="local")
                        scope = fn.removeprefix("T.alloc_")
                        call = ast.Call(call.func, call.args, [*call.keywords, ast.keyword(
                            "scope", ast.Constant(scope))], lineno=call.lineno,
                            col_offset=call.col_offset)
                    buffer = alloc_buffer(self.src, call, name, env)
                else:
                    buffer = decl_buffer(self.src, node.value, fn, name, env, node)
                return (lambda rest: Allocate(buffer, rest, span=span)), name, buffer
            if fn == "T.env_thread":
                return None, name, env_thread(self.src, node.value, name)
            if fn == "T.launch_thread":
                var, make = launch_thread(self.src, node.value, name, self.exprs, env)
                return make, name, var
            if fn == "T.allocate":
                pointer = allocate(self.src, node.value, name, env,
                                   frozenset(id(s) for s in after))
                return None, name, pointer
            if fn == "T.match_buffer" and self.blocks:
                if isinstance(env.get(name), (Buffer, View)):
                    raise self.src.error(node.targets[0], f"the buffer name {name!r} is "
                                                          "already in use here")
                return self.match_in_block(node.value, name, env, span)
            top, match = self.late_match
            if fn == "T.match_buffer" and id(node) in top:
                return None, name, match(node, env)
            if fn == "T.match_buffer":
                raise self.src.error(node.value, "T.match_buffer must stand at the top level "
                                                 "of the function body, or in a block")
            dtype = symbolic_declaration(node.value)
            if dtype is not None:  # x = T.int32() further down the body
                return None, name, self.symbolic.declare_inner(node.targets[0], dtype)
            value = self.exprs.expr(node.value, env)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
            value = self._augmented(node, self.exprs.value(node.target, env), env)
        else:
            return None
        var = Var(name, value.dtype)
        if self.blocks and id(node) in self.blocks[-1].top:
            self.blocks[-1].bindings.append((var, value))  # in scope of a later T.reads
        return (lambda rest: LetStmt(var, value, rest, span=span)), name, var

    def _augmented(self, node: ast.AugAssign, old, env: dict) -> Expr:
        fn = BINOPS.get(type(node.op))
        if fn is None:
            raise self.src.error(node, "this augmented assignment is not supported")
        new = self.exprs.value(node.value, env)
        return self.exprs.strong(self.exprs.build(node, fn, *resolve(old, new)), node)

    # ------------------------------------------------------------ statements

    def _For(self, node: ast.For, env: dict) -> Stmt:
        if node.orelse:
            raise self.src.error(node, "for ... else is not supported")
        fn = call_name(node.iter)
        refused = refusal(fn)
        if refused is not None:
            raise self.src.error(node.iter, refused)
        annotations = None
        if isinstance(node.iter, ast.Call) and any(kw.arg == "annotations"
                                                   for kw in node.iter.keywords):
            # range(n, annotations={...}): hints for TVM's passes, kept for the printer.
            (given,) = [kw.value for kw in node.iter.keywords if kw.arg == "annotations"]
            annotations = attr_value(self.src, given)
            if not isinstance(annotations, AttrMap):
                raise self.src.error(given, "a loop's annotations are a dict: "
                                            'annotations={"pragma_unroll_explicit": 1}')
            node = ast.For(node.target, ast.Call(node.iter.func, node.iter.args, [
                kw for kw in node.iter.keywords if kw.arg != "annotations"],
                lineno=node.iter.lineno, col_offset=node.iter.col_offset),
                node.body, node.orelse, lineno=node.lineno, col_offset=node.col_offset)
        if fn == "T.grid":
            return self._grid(node, env)
        if fn not in _LOOP_KINDS and fn != "T.thread_binding":
            raise self.src.error(node.iter, "a loop must iterate over T.serial, T.parallel, "
                                            "T.vectorized, T.unroll, T.thread_binding, "
                                            "T.grid or range")
        if not isinstance(node.target, ast.Name):
            raise self.src.error(node.target, f"{fn} binds one loop variable")
        if fn == "T.thread_binding":
            start, stop, kind = thread_binding(self.src, node.iter)
        else:
            start, stop = bind_args(self.src, node.iter, fn, ("start", "stop"), 1)
            kind = _LOOP_KINDS[fn]
        if stop is None:
            extent = self.exprs.index(start, env)
            lo = IntImm(0, extent.dtype)
        else:
            lo = self.exprs.index(start, env)
            extent = span_extent(lo, self.exprs.index(stop, env))
            lo = ops.cast(extent.dtype, lo)
        var = Var(node.target.id, extent.dtype)
        self.loops[var] = (lo, extent)
        body = self.body(node.body, {**env, var.name: var})
        return For(var, lo, extent, kind, body, span=self.src.span(node),
                   annotations=annotations)

    def _grid(self, node: ast.For, env: dict) -> Stmt:
        call = node.iter
        if call.keywords or not call.args:
            raise self.src.error(call, "T.grid takes the loop extents as arguments")
        target = node.target
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(n, ast.Name) for n in names):
            raise self.src.error(target, "T.grid binds plain loop variable names")
        seen = [n.id for n in names]
        for k, n in enumerate(names):
            if n.id in seen[:k]:
                raise self.src.error(n, f"T.grid binds {n.id!r} twice")
        if len(names) != len(call.args):
            raise self.src.error(node, f"T.grid has {len(call.args)} extents but the loop "
                                       f"binds {len(names)} variables")
        extents = [self.exprs.index(a, env) for a in call.args]
        variables = [Var(n.id, e.dtype) for n, e in zip(names, extents, strict=True)]
        for var, extent in zip(variables, extents, strict=True):
            self.loops[var] = (IntImm(0, extent.dtype), extent)
        inner = {**env, **{v.name: v for v in variables}}
        body = self.body(node.body, inner)
        span = self.src.span(node)
        for var, extent in reversed(list(zip(variables, extents, strict=True))):
            body = For(var, IntImm(0, extent.dtype), extent, ForKind.SERIAL, body, span=span)
        return body

    def _If(self, node: ast.If, env: dict) -> Stmt:
        cond = self.exprs.cond(node.test, env)
        then = self.body(node.body, env)
        other = self.body(node.orelse, env) if node.orelse else None
        return IfThenElse(cond, then, other, span=self.src.span(node))

    def _With(self, node: ast.With, env: dict) -> Stmt:
        item = node.items[0]
        call = item.context_expr
        fn = call_name(call)
        refused = refusal(fn)
        if refused is not None:
            raise self.src.error(call, refused)
        if len(node.items) == 1 and fn == "T.decl_buffer":
            return self._with_buffer(node, call, item.optional_vars, env)
        if len(node.items) == 1 and fn == "T.LetStmt":
            return self._with_let(node, call, item.optional_vars, env)
        if len(node.items) == 1 and is_reduce_scope(call):
            return thread_allreduce(self.src, self.exprs, node, env)
        if len(node.items) == 1 and fn == "T.attr":
            make = self.attr(call, env, self.src.span(node))
            return make(self.body(node.body, env))
        if len(node.items) == 1 and fn == "T.launch_thread":
            target = item.optional_vars
            if target is not None and not isinstance(target, ast.Name):
                raise self.src.error(target, "with T.launch_thread(...) as binds one name")
            var, make = launch_thread(self.src, call, target.id if target else None,
                                      self.exprs, env)
            return make(self.body(node.body, {**env, var.name: var}))
        if len(node.items) == 1 and fn == "T.init":
            bind_args(self.src, call, fn, (), 0)
            block = self.blocks[-1] if self.blocks else None
            cond = init_condition(self.src, call, block, block is not None
                                  and id(node) in block.top)
            return IfThenElse(cond, self.body(node.body, env), span=self.src.span(node))
        if len(node.items) != 1 or fn != "T.block":
            raise self.src.error(call, 'the only supported with statements are '
                                       'with T.block("name"), with T.init(), with '
                                       'T.launch_thread(...), with T.attr(...), with '
                                       'T.LetStmt(value) as x and with '
                                       'T.decl_buffer(...) as A')
        if item.optional_vars is not None:
            raise self.src.error(item.optional_vars, "with T.block(...) as ... is not supported")
        (name, no_realize) = bind_args(self.src, call, "T.block", ("name", "no_realize"), 0)
        if no_realize is not None:
            raise self.src.error(no_realize, "T.block(..., no_realize=...) is not supported")
        if name is None:
            # Schedules address blocks by name: an unnamed one gets block_0, block_1, ...
            label = f"block_{self.unnamed}"
            self.unnamed += 1
        else:
            label = string_arg(self.src, name, "a block name")
        scope = BlockScope(label, frozenset(id(s) for s in node.body), self.loops)
        self.blocks.append(scope)
        try:
            body = self.body(node.body, env)
        finally:
            self.blocks.pop()
        # A block that declares nothing gets the header TVM would need (derive_header).
        header = scope.header() or derive_header(body, self.loops)
        block = Block(label, body, header, span=self.src.span(node))
        if scope.reads is not None or scope.writes is not None:
            self.declared.append((block, scope.reads, scope.writes))
        if scope.axes:
            self.axes.append(BlockAxes(tuple(scope.axes), scope.where, scope.guarded))
        return block

    def _with_let(self, node: ast.With, call: ast.Call, target, env: dict) -> Stmt:
        """``with T.LetStmt(value) as x:``: x is bound for the body only (the form of a let
        followed by other statements that do not see it)."""
        if not isinstance(target, ast.Name):
            raise self.src.error(call, "with T.LetStmt(value) needs 'as <name>'")
        (value,) = bind_args(self.src, call, "T.LetStmt", ("value",), 1)
        value = self.exprs.expr(value, env)
        var = Var(target.id, value.dtype)
        body = self.body(node.body, {**env, target.id: var})
        return LetStmt(var, value, body, span=self.src.span(node))

    def _with_buffer(self, node: ast.With, call: ast.Call, target, env: dict) -> Stmt:
        """``with T.decl_buffer(shape, dtype) as A:``: A is allocated for the body."""
        if not isinstance(target, ast.Name):
            raise self.src.error(call, "with T.decl_buffer(...) needs 'as <name>'")
        if declares(call, "T.decl_buffer", env):  # a view, for the body
            buffer = declare(self.src, call, "T.decl_buffer", target.id, env, self.exprs)
            body = self.body(node.body, {**env, target.id: buffer})
            return DeclBuffer(buffer, body, span=self.src.span(node))
        if isinstance(env.get(target.id), (Buffer, View)):
            raise self.src.error(target, f"the buffer name {target.id!r} is already in use here")
        buffer = decl_buffer(self.src, call, "T.decl_buffer", target.id, env, None)
        body = self.body(node.body, {**env, target.id: buffer})
        return Allocate(buffer, body, span=self.src.span(node))

    def _Assign(self, node: ast.Assign, env: dict) -> Stmt:
        if len(node.targets) != 1:
            raise self.src.error(node, "chained assignment is not supported")
        target = node.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)):
            refused = tuple_refusal(call_name(node.value))
            raise self.src.error(node, refused or "tuple assignment is not supported; assign "
                                                  "one name or buffer element per statement")
        if not isinstance(target, ast.Subscript):
            raise self.src.error(target, "only a name or a buffer element can be assigned")
        return self._store(node, target, self.exprs.value(node.value, env), node.value, env)

    def _AugAssign(self, node: ast.AugAssign, env: dict) -> Stmt:
        if not isinstance(node.target, ast.Subscript):
            raise self.src.error(node.target, "only a name or a buffer element can be assigned")
        old = self.exprs.value(node.target, env)
        return self._store(node, node.target, self._augmented(node, old, env), node.value, env)

    def _store(self, node: ast.stmt, target: ast.Subscript, value, value_node: ast.expr,
               env: dict) -> Stmt:
        buffer, indices = self.exprs.access(target, env, slices=True)
        lanes = max(dtypes.lanes(i.dtype) for i in indices) if indices else 1
        if lanes > 1:  # a vector store, C[b:b + 4] = v
            return self.vector_store(node, buffer, indices, lanes, value, value_node)
        # Constants take the buffer's dtype: the RFC stores `0.0` into int32 buffers.
        value = self.exprs.strong(value, value_node, buffer.dtype)
        if value.dtype != buffer.dtype:
            raise self.src.error(value_node, f"cannot store a {value.dtype} value in the "
                                             f"{buffer.dtype} buffer {buffer.name}")
        return BufferStore(buffer, value, indices, span=self.src.span(node))

    def _Expr(self, node: ast.Expr, env: dict) -> Stmt:
        value = node.value
        if call_name(value) == "T.evaluate":
            # T.evaluate(e) is TVM's spelling of the expression statement `e`.
            (value,) = bind_args(self.src, value, "T.evaluate", ("value",), 1)
        return Evaluate(self.exprs.expr(value, env), span=self.src.span(node))

    def _Pass(self, node: ast.Pass, env: dict) -> Stmt:
        return SeqStmt((), span=self.src.span(node))
