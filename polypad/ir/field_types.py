"""What each node field may hold, read from the grammar's own annotations.

``IfThenElse.then_case: Stmt`` says a ``then`` branch is a statement, never
``None``; ``else_case: Stmt | None`` says an ``else`` branch may be missing.
:func:`field_problems` checks a node against that, field by field, for the
fields whose annotation names IR classes (nodes, buffers, ``ForKind``);
fields of plain values (names, dtypes, constants) are not looked at.

Statements check their fields as they are made (``Stmt.__post_init__``), so
a rewriter that returns ``None`` for a child it removed fails at that
rewrite; :func:`polypad.ir.verify.verify` checks every node, expressions
too.

The annotations are read in each class's own module, so this module
imports no node: the grammar imports it.
"""

from __future__ import annotations

import dataclasses
import types
import typing

#: A check: (field name, what it takes in words, the test of a value: ``None`` when
#: the value is right, else what is wrong with it).
_Check = tuple[str, str, typing.Callable[[object], "str | None"]]
_CHECKS: dict[type, tuple[_Check, ...]] = {}


def field_problems(node) -> list[str]:
    """A sentence for each field of ``node`` holding what its annotation rules out,
    such as "IfThenElse.then_case must be a statement, got None"."""
    checks = _CHECKS.get(type(node))
    if checks is None:
        checks = _CHECKS[type(node)] = _checks_of(type(node))
    problems = []
    for name, what, test in checks:
        wrong = test(getattr(node, name))
        if wrong is not None:
            problems.append(f"{type(node).__name__}.{name} must be {what}, got {wrong}")
    return problems


def _checks_of(cls: type) -> tuple[_Check, ...]:
    if not dataclasses.is_dataclass(cls):
        return ()
    hints = typing.get_type_hints(cls)
    checks = []
    for f in dataclasses.fields(cls):
        if not (f.init and f.compare) or f.name not in hints:
            continue
        test = _test(hints[f.name])
        if test is not None:
            checks.append((f.name, _words(hints[f.name]), test))
    return tuple(checks)


#: The modules of the grammar whose classes a field check tests (nodes and buffers,
#: ``ForKind``); the classes of TVM's grammar and of block headers are not tested.
_CHECKED = ("polypad.ir.nodes_expr", "polypad.ir.nodes_stmt")


def _is_ir_class(t) -> bool:
    return isinstance(t, type) and t.__module__ in _CHECKED


def _got(value) -> str:
    if value is None:
        return "None"
    return _article(type(value).__name__)


def _test(t):
    """A test for annotation ``t`` (see :data:`_Check`), or ``None`` where ``t`` names
    no IR class."""
    if _is_ir_class(t):
        return lambda v: None if isinstance(v, t) else _got(v)
    args = typing.get_args(t)
    if isinstance(t, types.UnionType) or typing.get_origin(t) is typing.Union:
        if not any(_test(a) is not None for a in args):
            return None
        allowed = tuple(a for a in args if isinstance(a, type))
        return lambda v: None if isinstance(v, allowed) else _got(v)
    if typing.get_origin(t) is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _test(args[0])
        if item is None:
            return None

        def items(v):
            if not isinstance(v, tuple):
                return _got(v)
            for k, x in enumerate(v):
                wrong = item(x)
                if wrong is not None:
                    return f"{wrong} at position {k}"
            return None

        return items
    return None


def _words(t) -> str:
    """Annotation ``t`` in words: ``Stmt | None`` is "a statement or None"."""
    if t is type(None):
        return "None"
    if isinstance(t, type):
        return _WORDS.get(t.__name__) or _article(t.__name__)
    args = typing.get_args(t)
    if typing.get_origin(t) is tuple:
        return f"a tuple of {_words(args[0]).split(' ', 1)[1]}s"
    return " or ".join(_words(a) for a in args)


_WORDS = {"Stmt": "a statement", "Expr": "an expression"}


def _article(name: str) -> str:
    return f"{'an' if name[0] in 'AEIOU' else 'a'} {name}"
