"""Visitor dispatch and the sharing Rewriter."""

from polypad.ir import (
    Add,
    Buffer,
    BufferStore,
    For,
    ForKind,
    IntImm,
    Rewriter,
    SeqStmt,
    Var,
    Visitor,
    const,
    walk,
)
from polypad.ir.substitute import free_vars, substitute


def _loop():
    A = Buffer("A", (16,), "int32")
    i = Var("i")
    body = SeqStmt((BufferStore(A, i * 2, (i,)), BufferStore(A, A[i] + 1, (i,))))
    return A, i, For(i, const(0), const(16), ForKind.SERIAL, body)


def test_unchanged_rewrite_returns_the_same_object():
    _, _, loop = _loop()
    assert Rewriter().visit(loop) is loop


def test_rewrite_shares_unchanged_siblings():
    _, _, loop = _loop()

    class BumpConstants(Rewriter):
        def visit_IntImm(self, node):
            return IntImm(node.value + 100, node.dtype) if node.value == 2 else node

    new = BumpConstants().visit(loop)
    assert new is not loop
    assert new.body.stmts[1] is loop.body.stmts[1]
    assert new.body.stmts[0].value.b == IntImm(102)


def test_dispatch_falls_back_along_the_class_hierarchy():
    _, _, loop = _loop()
    seen = []

    class Binary(Visitor):
        def visit_BinaryOp(self, node):
            seen.append(type(node).__name__)
            self.generic_visit(node)

    Binary().visit(loop)
    assert seen == ["Mul", "Add"]


def test_walk_is_preorder():
    _, i, loop = _loop()
    kinds = [type(n).__name__ for n in walk(loop)]
    assert kinds[:4] == ["For", "Var", "IntImm", "IntImm"]
    assert kinds.count("BufferStore") == 2


def test_substitute_and_free_vars():
    _, i, loop = _loop()
    j = Var("j")
    e = substitute(i * 2 + 1, {i: j + 4})
    assert e == Add((j + 4) * 2, IntImm(1))
    assert free_vars(loop) == []
    assert free_vars(loop.body) == [i]
