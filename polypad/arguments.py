"""Argument checks at the front door of every public function.

A public function checks what it was given before it does any work, so that
a wrong argument fails with a message about the call, not an
``AttributeError`` from deep inside.  A wrong type raises
:class:`~polypad.errors.ArgumentTypeError`, a value outside the accepted
set :class:`~polypad.errors.ArgumentValueError`; both name the function and
the parameter.  A *name* that is not in the function (a block, buffer or
loop) is not checked here: :mod:`polypad.ir.locate` raises
:class:`~polypad.errors.NotFoundError` listing the names that are.

>>> expect(None, PrimFunc, "func", "simplify")
Traceback (most recent call last):
ArgumentTypeError: simplify: parameter func takes a PrimFunc, not NoneType

This module depends on :mod:`polypad.errors` alone, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterable

from polypad.errors import ArgumentTypeError, ArgumentValueError


def expect(value, types, param: str, where: str, *, what: str | None = None,
           error: type[ArgumentTypeError] = ArgumentTypeError):
    """``value`` when it is an instance of ``types`` (a type, ``None``, or a tuple of
    them); otherwise raise ``error`` naming ``where``'s parameter ``param``.

    ``what`` describes the accepted values when the type names alone would not
    ("a block name (str) or None").
    """
    options = types if isinstance(types, tuple) else (types,)
    if value is None and None in options:
        return value
    classes = tuple(t for t in options if t is not None)
    # bool is an int to Python, never to a caller who meant a number or a name.
    if isinstance(value, classes) and not (isinstance(value, bool) and bool not in classes
                                           and int in classes):
        return value
    raise wrong_type(value, param, where, what or describe(options), error=error)


def expect_choice(value, choices: Iterable, param: str, where: str):
    """``value`` when it is one of ``choices``; otherwise raise
    :class:`ArgumentTypeError` (a value of another type) or
    :class:`ArgumentValueError` (listing the choices)."""
    choices = tuple(choices)
    names = [repr(c) for c in choices]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    kinds = tuple({type(c) for c in choices})
    if not isinstance(value, kinds):
        raise wrong_type(value, param, where, f"one of {listed}")
    if value not in choices:
        raise ArgumentValueError(f"{where}: {param} must be one of {listed}, not {value!r}")
    return value


def expect_budget(budget, where: str) -> float | None:
    """``budget`` as seconds (a positive number), or ``None`` for the default budget."""
    if budget is None:
        return None
    expect(budget, (int, float), "budget", where, what="a number of seconds or None")
    if not budget > 0:
        raise ArgumentValueError(f"{where}: budget must be a positive number of seconds, "
                                 f"not {budget!r}")
    return float(budget)


def wrong_type(value, param: str, where: str, what: str, *,
               error: type[ArgumentTypeError] = ArgumentTypeError) -> ArgumentTypeError:
    """The error for ``value`` given to parameter ``param`` of ``where``, which takes ``what``."""
    return error(f"{where}: parameter {param} takes {what}, not {got(value)}")


def got(value) -> str:
    """``value`` described for a message: its type, and the value itself when short."""
    kind = type(value).__name__
    if isinstance(value, (str, int, float)) and len(repr(value)) <= 40:
        return f"{kind} {value!r}"
    return kind


def describe(options: tuple) -> str:
    """``(PrimFunc, None)`` as "a PrimFunc or None"."""
    names = ["None" if t is None else _article(t.__name__) for t in options]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "AEIOUaeiou" else f"a {name}"
