"""Running a plain ``assert c, msg``: what a false one raises, in every target.

A packed function opens with checks such as ``assert n % 4 == 0, "n must be a
multiple of 4"``.  One on plain values (:func:`polypad.ir.opaque.is_plain_check`)
is a fact for the statements after it (:mod:`polypad.ir.stated`), so the
analyses rely on it: every target must run it where it stands, always (not
only with ``check_assumptions=True``, as for ``T.assume``), and a false one
raises the same :class:`~polypad.errors.AssertionFailedError` in each, with
TVM's message and the values of the condition's variables.
"""

from __future__ import annotations

import ast

import numpy as np

from polypad.errors import AssertionFailedError
from polypad.ir import nodes as ir
from polypad.ir.location import source_location
from polypad.ir.nodes import PrimFunc, Var
from polypad.ir.show import show
from polypad.ir.substitute import free_vars
from polypad.ir.visitor import walk


def assert_message(text: str) -> str:
    """TVM's message from the source text the parser keeps (:class:`~polypad.ir.nodes.Assert`):
    the string of ``"msg"``; ``kind: parts`` of TVM's ``("kind", ["part", ...])``;
    the text itself for anything else."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    if isinstance(value, str):
        return value
    if (isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str)
            and isinstance(value[1], list | tuple)):
        return f"{value[0]}: {''.join(str(part) for part in value[1])}"
    return text


def run_asserts(func: PrimFunc) -> list[ir.Assert]:
    """The asserts of lowered ``func``, distinct by identity, in walk order (the numbers
    the compiled targets give them)."""
    seen: dict[int, ir.Assert] = {}
    for node in walk(func.body):
        if isinstance(node, ir.Assert):
            seen.setdefault(id(node), node)
    return list(seen.values())


def assert_error(func: PrimFunc, stmt: ir.Assert, env: dict[Var, object]) -> AssertionFailedError:
    """The error for ``stmt`` of ``func`` found false, where ``env`` holds the values of
    its variables::

        assert n % 4 == 0 failed in 'f' at f.py:3: n must be a multiple of 4 (n = 6)
    """
    values = {v.name: _python(env[v]) for v in free_vars(stmt.condition) if v in env}
    message = assert_message(stmt.message)
    shown = ", ".join(f"{name} = {value}" for name, value in values.items())
    return AssertionFailedError(
        f"assert {show(stmt.condition).strip()} failed in {func.name!r}{source_location(stmt)}"
        + (f": {message}" if message else "") + (f" ({shown})" if shown else ""),
        condition=stmt.condition, assert_message=message, values=values)


def _python(value):
    return value.item() if isinstance(value, np.generic) else value
