"""The bridge to TVM 0.27: ``from_tvm`` and ``to_tvm``, through TVMScript text.

polypad reads what TVM prints and prints what TVM reads, so the bridge is
text both ways: ``from_tvm(obj)`` parses ``obj.script()``, and
``to_tvm(func)`` hands ``polypad.script(func)`` (TVM 0.27's ``tirx``
spelling) to ``tvm.script.from_source``.  A block keeps what TVM declared
about it (:class:`~polypad.ir.nodes.BlockHeader`), so a function read from
TVM goes back structurally equal to TVM's own parse of it wherever polypad
reads every construct (see docs/tvmscript.md).

TVM is an optional dependency (``pip install "polypad[tvm]"``, which pins
``apache-tvm==0.27.0.post1`` and ``apache-tvm-ffi==0.1.14.post1``); it is
imported on the first call, never by ``import polypad``.

>>> from polypad import tvm as pptvm
>>> f = pptvm.from_tvm(te.create_prim_func([A, B, C]))   # a polypad PrimFunc
>>> mod = pptvm.to_tvm(f)                                  # a tvm.tirx.PrimFunc
"""

from __future__ import annotations

import dataclasses

from .errors import MissingDependencyError, TVMInteropError
from .ir.nodes import IRModule, LetStmt, PrimFunc, SeqStmt, Stmt
from .ir.visitor import Rewriter

INSTALL = 'pip install "polypad[tvm]"'


def _tvm():
    """The ``tvm`` package, or a MissingDependencyError that says how to install it."""
    try:
        import tvm
        import tvm.script  # noqa: F401  (from_source)
    except ImportError as err:
        raise MissingDependencyError(
            f"polypad.tvm needs TVM 0.27, which is not installed ({err}); install it "
            f"with: {INSTALL}") from err
    return tvm


def from_tvm(obj, *, filename: str = "<tvm>") -> PrimFunc | IRModule:
    """A TVM ``PrimFunc`` or ``IRModule`` as polypad IR, read from TVM's own script.

    A module of one function gives an :class:`IRModule` of one function, as
    its script is a class.  What polypad does not read is a
    :class:`~polypad.errors.ParseError` at the line of TVM's text.
    """
    tvm = _tvm()
    if not isinstance(obj, (tvm.tirx.PrimFunc, tvm.IRModule)):
        raise TVMInteropError(f"from_tvm takes a tvm.tirx.PrimFunc or a tvm.IRModule, "
                              f"got {type(obj).__name__}")
    from .script import parse
    return parse(obj.script(), filename=filename)


def to_tvm(node: PrimFunc | IRModule):
    """``node`` as TVM's object: ``tvm.script.from_source`` of its script.

    A :class:`PrimFunc` gives a ``tvm.tirx.PrimFunc``, an :class:`IRModule`
    a ``tvm.IRModule``.  TVM's refusal (a construct TVM 0.27 lacks) is a
    :class:`~polypad.errors.TVMInteropError` quoting TVM's message.
    """
    from .arguments import expect
    from .script import script

    expect(node, (PrimFunc, IRModule), "node", "to_tvm")
    tvm = _tvm()
    text = script(_lets_to_list_end(node), spelling="tirx")
    try:
        return tvm.script.from_source(text)
    except Exception as err:  # TVM's DiagnosticError and the like: quoted, chained
        raise TVMInteropError(f"TVM 0.27 refused polypad's script of {node.name!r}: "
                              f"{_first_lines(str(err))}") from None


def _lets_to_list_end(node: PrimFunc | IRModule) -> PrimFunc | IRModule:
    """``node`` with each let that ends before its statement list does (which polypad
    prints ``with T.LetStmt(v) as x:``) over the rest of the list instead.

    TVM 0.27's let has no body: it binds to the end of its list, and it has no
    ``T.LetStmt`` to print the shorter scope with.  The rest of the list does not use
    the let's variable (it is out of scope there), so the function means the same."""
    if isinstance(node, IRModule):
        return dataclasses.replace(node, funcs=tuple(_lets_to_list_end(f) for f in node.funcs))
    return _LetsToListEnd().visit(node)


class _LetsToListEnd(Rewriter):
    def visit_SeqStmt(self, s: SeqStmt) -> Stmt:
        stmts = [self.visit(x) for x in s.stmts]
        for k in range(len(stmts) - 2, -1, -1):
            if isinstance(stmts[k], LetStmt):
                stmts[k:] = [self._extended(stmts[k], stmts[k + 1:])]
        if len(stmts) == len(s.stmts) and all(a is b for a, b in zip(stmts, s.stmts)):
            return s
        return stmts[0] if len(stmts) == 1 else SeqStmt(tuple(stmts), span=s.span)

    def _extended(self, let: LetStmt, rest: list[Stmt]) -> LetStmt:
        """``let`` (through its chain of lets) over its body followed by ``rest``."""
        if isinstance(let.body, LetStmt):
            body = self._extended(let.body, rest)
        else:
            first = list(let.body.stmts) if isinstance(let.body, SeqStmt) else [let.body]
            body = self.visit_SeqStmt(SeqStmt((*first, *rest)))
        return dataclasses.replace(let, body=body)


def _first_lines(message: str, count: int = 6) -> str:
    lines = [ln for ln in message.strip().splitlines() if ln.strip()]
    return "\n".join(lines[:count])
