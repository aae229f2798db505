"""A packed function's computation, without the scaffolding, for the value analyses.

What TVM's ``MakePackedAPI`` prints around a kernel reads the arguments
through pointers polypad does not follow (``T.tvm_struct_get(args, 0, 13,
"int32")``), checks them (``assert``), declares the tensors over the data
pointers it found (``A = T.decl_buffer((8, 12), data=T.reinterpret(...))``)
and annotates (``T.attr``).  The computation inside reads and writes those
tensors only.  :func:`unpack` gives the function the value analyses are
asked about instead:

* ``assert c, msg`` aborts the call where ``c`` is false, so on every
  execution that goes on, ``c`` holds after it: it becomes ``T.assume(c)``.
  An assert that reads an opaque value (a pointer, an opaque intrinsic) is
  a check of the calling convention polypad cannot evaluate; it is left
  out, and so is an ``if`` on an opaque condition that holds nothing but
  such checks.  Leaving a fact out keeps every proof sound; a counterexample
  is then one for a call that passes those checks (they read nothing the
  counterexample sets, which :attr:`Unpacked.entangled` confirms), and
  polypad takes such a call to exist.
* A tensor declared over a pointer the arguments give (its ``data`` reads a
  pointer parameter, through lets) is the caller's memory: it becomes a
  buffer parameter.  Two such tensors are different memory only where the
  function says so (``"tirx.noalias": True``, which TVM sets on what it
  lowers); without it the declaration stays opaque.
* A scalar let whose value an opaque intrinsic gives (``m =
  T.tvm_struct_get(args, 0, 13, "int32")``) becomes a scalar parameter
  whose value polypad does not know (:attr:`Unpacked.opaque`): a proof
  holds whatever it is, and a counterexample that needs its value is not
  claimed.  One that steers nothing -- read only by annotations and by
  checks about such values alone (``assert A_type_index == 0 or ...``,
  ``dev_id`` in ``T.attr``) -- goes, with those checks: whatever it holds,
  the computation is the same.  Lets of pointers go.
* Annotations that change no value (``storage_alignment``,
  ``compute_scope``, ``device_id``, ``device_type``) go, as does the final
  ``return`` of a constant status, and the declarations of tensors over no
  memory that nothing reads or writes (``A = T.Buffer((8, 12))``, which only
  an annotation names).

Anything else opaque (an external call, an unknown annotation, an access of
memory polypad does not know) is returned as the :class:`OpaqueSite` that
stops the function from being read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polypad.ir import nodes as n
from polypad.ir.intrinsics import assume
from polypad.ir.opaque import OpaqueSite, first_opaque, is_opaque, is_plain_check
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.views import is_view
from polypad.ir.visitor import children, walk

#: Annotations (``T.attr`` keys) that change no value a kernel computes.
HARMLESS_ATTRS = frozenset({"storage_alignment", "compute_scope", "device_id",
                            "device_type"})
_NOALIAS = ("tirx.noalias", "tir.noalias")


@dataclass
class Unpacked:
    """The computation of a packed function (see the module docstring).

    ``made`` maps each statement of the original (by identity) to what it
    became (``None``: left out); ``opaque`` gives each scalar parameter
    standing for an opaque value the site that gives it; ``left_out`` the
    checks left out; ``entangled`` those among them that read a buffer or a
    variable the computation uses, which a counterexample might break.
    """

    func: n.PrimFunc
    made: dict[int, tuple[n.Stmt, n.Stmt | None]] = field(default_factory=dict)
    opaque: dict[n.Var, OpaqueSite] = field(default_factory=dict)
    left_out: list[OpaqueSite] = field(default_factory=list)
    entangled: list[OpaqueSite] = field(default_factory=list)


class _Refuse(Exception):
    def __init__(self, site: OpaqueSite) -> None:
        self.site = site


def unpack(func: n.PrimFunc) -> Unpacked | OpaqueSite:
    """The computation of ``func`` with its scaffolding read as the module docstring
    says, or the construct that stops it."""
    try:
        return _Unpack(func).run()
    except _Refuse as refused:
        return refused.site


class _Unpack:
    def __init__(self, func: n.PrimFunc) -> None:
        self.func = func
        self.out = Unpacked(func)
        self.pointers = {p for p in func.params if isinstance(p, n.Var) and p.dtype == "handle"}
        self.opaque_vars: set[n.Var] = set(self.pointers)
        self.from_args: set[n.Var] = set(self.pointers)  # pointers the arguments give
        self.external: list[n.Buffer] = []
        self.noalias = any(k in _NOALIAS and v is True for k, v in func.attrs)
        self.tails = _tail_returns(func.body)
        self.checks: list[tuple[OpaqueSite, n.Expr]] = []
        self.idle = self._idle_scalars()

    def run(self) -> Unpacked:
        body = self.stmt(self.func.body)
        if body is None:
            body = n.Evaluate(n.IntImm(0))
        used = free_vars(body)
        params = [p for p in self.func.params if not (isinstance(p, n.Var)
                                                       and p.dtype == "handle")]
        params += self.external
        opaque = [v for v in self.out.opaque if v in used]
        self.out.opaque = {v: self.out.opaque[v] for v in opaque}
        func = n.PrimFunc(self.func.name, (*params, *opaque), body, self.func.attrs)
        left = first_opaque(func, checks_as_facts=True)
        if left is not None:
            raise _Refuse(left)
        self.out.func = func
        buffers = {id(b) for b in self.external}
        for site, cond in self.checks:
            reads = [x for x in walk(cond) if isinstance(x, n.BufferLoad)]
            if reads or any(v in used and v not in self.opaque_vars for v in free_vars(cond)) \
                    or any(id(x.buffer) in buffers for x in reads):
                self.out.entangled.append(site)
        return self.out

    # ------------------------------------------------------------ expressions

    def opaque_expr(self, e) -> bool:
        """Whether ``e`` computes with something polypad does not know: an opaque
        intrinsic, a pointer.  (A scalar an intrinsic gave is a parameter of unknown
        value, which the analyses handle.)"""
        return any(is_opaque(x) or isinstance(x, (n.StringImm, n.BufferData))
                   or (isinstance(x, n.Var) and x.dtype == "handle")
                   for x in walk(e))

    def first_call(self, e) -> str:
        for x in walk(e):
            if is_opaque(x):
                return f"T.{x.op}"
            if isinstance(x, n.Var) and x.dtype == "handle":
                return f"the pointer {x.name!r}"
        return "a pointer"

    def _idle_scalars(self) -> set[n.Var]:
        """The scalars an opaque intrinsic gives that steer nothing: read only by lets of
        pointers, annotations, and checks about such values alone (``assert
        A_type_index == 0 or ...``).  They and their checks are left out: whatever they
        hold, the computation does the same."""
        scalars = {x.var for x in walk(self.func.body) if isinstance(x, n.LetStmt)
                   and x.var.dtype != "handle" and self.opaque_expr(x.value)}
        steering: set[n.Var] = set()
        for s in walk(self.func.body):
            if not isinstance(s, n.Stmt):
                continue
            match s:
                case n.Assert(condition=c) if set(free_vars(c)) <= scalars | self._pointers(c):
                    continue
                case n.LetStmt(var=var) if var in scalars or var.dtype == "handle":
                    continue
                case n.AttrStmt() | n.DeclBuffer() | n.Return():
                    continue
                case n.IfThenElse(condition=c) if self.opaque_expr(c):
                    continue
            for e in children(s):
                if isinstance(e, n.Expr):
                    steering.update(v for v in free_vars(e) if v in scalars)
        return scalars - steering

    @staticmethod
    def _pointers(e: n.Expr) -> set[n.Var]:
        return {v for v in free_vars(e) if v.dtype == "handle"}

    # ------------------------------------------------------------ statements

    def stmt(self, s: n.Stmt) -> n.Stmt | None:
        new = self._stmt(s)
        self.out.made[id(s)] = (s, new)
        return new

    def _stmt(self, s: n.Stmt) -> n.Stmt | None:
        match s:
            case n.SeqStmt(stmts=stmts):
                kept = [x for x in (self.stmt(t) for t in stmts) if x is not None]
                if not kept:
                    return None
                return kept[0] if len(kept) == 1 else n.SeqStmt(tuple(kept), span=s.span)
            case n.Assert(condition=cond):
                idle = set(free_vars(cond)) <= self.idle | self._pointers(cond)
                if not self.opaque_expr(cond) and not (idle and free_vars(cond)):
                    if is_plain_check(s):  # the model's own: a check that may raise
                        return s
                    return n.Evaluate(assume(cond), span=s.span)
                why = (f"reads {self.first_call(cond)}, which polypad does not evaluate"
                       if self.opaque_expr(cond) else "checks only values that steer nothing")
                site = OpaqueSite("assert", why, s.span)
                self.out.left_out.append(site)
                self.checks.append((site, cond))
                return None
            case n.LetStmt(var=var, value=value, body=body):
                if var.dtype == "handle" or self.opaque_expr(value):
                    self.opaque_vars.add(var)
                    if any(isinstance(x, n.Var) and x in self.from_args for x in walk(value)):
                        self.from_args.add(var)
                    if var.dtype != "handle" and var not in self.idle:
                        # a parameter of unknown value from here on
                        self.out.opaque[var] = OpaqueSite(
                            repr(var.name), f"is given by {self.first_call(value)}, whose "
                            "value polypad does not know", s.span)
                    return self.stmt(body)
                return self.rebuild(s)
            case n.DeclBuffer(buffer=buffer, body=body) if not is_view(buffer):
                return self.declared(s, buffer, body)
            case n.AttrStmt(key=key, body=body):
                if key not in HARMLESS_ATTRS:
                    raise _Refuse(OpaqueSite(f"T.attr(..., {key!r}, ...)", "is an annotation "
                                             "polypad does not interpret", s.span))
                return self.stmt(body)
            case n.Return(value=value):
                if id(s) in self.tails and isinstance(value, n.IntImm):
                    return None  # the status of a call that ran to its end
                raise _Refuse(OpaqueSite("return", "ends a packed function before its "
                                         "end, which polypad does not run", s.span))
            case n.IfThenElse(condition=cond) if self.opaque_expr(cond):
                then = self.stmt(s.then_case)
                other = None if s.else_case is None else self.stmt(s.else_case)
                if then is not None or other is not None:
                    raise _Refuse(OpaqueSite(f"the condition of `if {show(cond)}`",
                                             f"reads {self.first_call(cond)}, which polypad "
                                             "does not evaluate", s.span))
                site = OpaqueSite(f"`if {show(cond)}`", "holds only checks polypad does not "
                                  "evaluate", s.span)
                self.out.left_out.append(site)
                self.checks.append((site, cond))
                return None
        return self.rebuild(s)

    def rebuild(self, s: n.Stmt) -> n.Stmt | None:
        """``s`` with its statement children unpacked (an emptied branch or body becomes
        ``T.evaluate(0)``)."""
        match s:
            case n.IfThenElse(condition=cond, then_case=then, else_case=other):
                new_then = self.stmt(then) or n.Evaluate(n.IntImm(0))
                new_other = None if other is None else self.stmt(other)
                if new_then is then and new_other is other:
                    return s
                return n.IfThenElse(cond, new_then, new_other, span=s.span)
            case n.For() | n.LetStmt() | n.Block() | n.Allocate() | n.DeclBuffer():
                body = self.stmt(s.body) or n.Evaluate(n.IntImm(0))
                if body is s.body:
                    return s
                if isinstance(s, n.Block):
                    return n.Block(s.name, body, s.header, span=s.span)
                import dataclasses

                return dataclasses.replace(s, body=body)
        return s

    def declared(self, s: n.DeclBuffer, buffer: n.Buffer, body: n.Stmt) -> n.Stmt | None:
        """A tensor declared over memory that is not another buffer's."""
        if buffer.data is n.NO_DATA or buffer.data is None:
            inner = self.stmt(body)
            if inner is not None and any(
                    isinstance(x, (n.BufferLoad, n.BufferStore)) and x.buffer is buffer
                    for x in walk(inner)):
                raise _Refuse(OpaqueSite(f"buffer {buffer.name!r}", "is declared over memory "
                                         "polypad does not know, and accessed", s.span))
            return inner
        pointer = buffer.data
        from_args = any(isinstance(x, n.Var) and x in self.from_args for x in walk(pointer))
        if not (from_args and self.noalias):
            why = ("is declared over a pointer the arguments do not give" if not from_args
                   else "is declared over an argument's pointer, and the function does not "
                   "say its arguments are distinct memory (\"tirx.noalias\")")
            raise _Refuse(OpaqueSite(f"buffer {buffer.name!r}", why, s.span))
        if any(b.data == pointer for b in self.external):
            raise _Refuse(OpaqueSite(f"buffer {buffer.name!r}", "shares its pointer with "
                                     "another tensor", s.span))
        self.external.append(buffer)
        return self.stmt(body)


def _tail_returns(body: n.Stmt) -> set[int]:
    """The ``return`` statements after which nothing else runs (by identity)."""
    out: set[int] = set()

    def tail(s: n.Stmt) -> None:
        match s:
            case n.Return():
                out.add(id(s))
            case n.SeqStmt(stmts=stmts) if stmts:
                tail(stmts[-1])
            case n.IfThenElse(then_case=then, else_case=other):
                tail(then)
                if other is not None:
                    tail(other)
            case n.LetStmt() | n.AttrStmt() | n.DeclBuffer() | n.Allocate() | n.Block():
                tail(s.body)

    tail(body)
    return out
