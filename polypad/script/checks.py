"""The checks a parse runs through the model, and what the parser gives them.

Reading text is the script's work, but three things a script states are
questions for the polyhedral model (:mod:`polypad.model`), a layer below
the script, which the script does not import:

- a block's ``T.axis`` bindings stay in their domains at every instance of
  the block (:mod:`polypad.model.block_axes`);
- a block's ``T.reads``/``T.writes`` cover what its body touches
  (:mod:`polypad.model.block_regions`);
- a ``T.match_buffer`` region's extents equal the view's shape for every
  value of the variables (:func:`polypad.model.affine.equal_everywhere`).

The parser gathers what each check needs (:class:`AxisDomain`,
:class:`BlockAxes`, :class:`Declared`) and calls the checks through the
slots here, which the model fills when it is imported
(``polypad/model/__init__.py`` calls :func:`register`), as this layer fills
the IR's printer slot (``polypad/ir/show.py``).  ``polypad/__init__.py``
imports the model, and any ``import polypad.<anything>`` runs it first, so
every ``parse`` has the checks.  A parse that has something to check before
they are registered (possible only while polypad itself is being imported)
is an internal error, never a skipped check.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from ..ir.nodes import Expr, Stmt, Var


@dataclass(frozen=True, eq=False)
class AxisDomain:
    """``var = T.axis.<kind>(dom, value)``: the domain ``[lo, hi)`` and the call it came from."""

    var: Var
    lo: Expr
    hi: Expr
    node: ast.Call
    text: str  # the domain as the message writes it: "[0, 16)"


@dataclass(frozen=True, eq=False)
class BlockAxes:
    """A block's axes with domains, and its ``T.where`` predicate.

    The first ``guarded`` axes come before the predicate; it limits their
    instances as well as the later axes' (which it encloses already).
    """

    axes: tuple[AxisDomain, ...]
    where: Expr | None
    guarded: int


@dataclass(frozen=True)
class Declared:
    """A ``T.reads`` or ``T.writes`` statement: its regions
    (:class:`~.parse_region.Region`), the lets in scope, its node."""

    regions: tuple
    bindings: tuple[tuple[Var, object], ...]
    node: object


# ------------------------------------------------------------ the slots

#: ``check(src, body, blocks, sizes)``: raise ``src.error(...)`` at the first axis whose
#: binding leaves its domain where the variables ``sizes`` are not negative.
AxesCheck = Callable[[object, Stmt, list[BlockAxes], tuple[Var, ...]], None]
#: ``check(src, body, declared)``, ``declared`` holding ``(block, reads, writes)``:
#: raise ``src.error(...)`` where a block's declared regions miss what its body touches.
RegionsCheck = Callable[[object, Stmt, list], None]
#: ``equal(a, b)``: whether ``a == b`` for every value of their variables.
Equality = Callable[[Expr, Expr], bool]

_axes: AxesCheck | None = None
_regions: RegionsCheck | None = None
_equal: Equality | None = None


def register(*, block_axes: AxesCheck, declared_regions: RegionsCheck,
             equal_everywhere: Equality) -> None:
    """Fill the slots (the model does, when it is imported)."""
    global _axes, _regions, _equal
    _axes, _regions, _equal = block_axes, declared_regions, equal_everywhere


def _missing(what: str) -> AssertionError:
    return AssertionError(f"polypad.model has not registered {what}: a parse ran while "
                          "polypad was still being imported")


def check_blocks(src, body: Stmt, axes: list[BlockAxes], declared: list,
                 sizes: tuple[Var, ...] = ()) -> None:
    """Raise a ParseError (``src.error``) where a block's axis bindings leave their
    domains, or its ``T.reads``/``T.writes`` miss what its body touches; axes first,
    since a block's axes come before its regions in the text.  ``sizes``: variables
    never negative (the parameter buffers' symbolic sizes)."""
    if axes:
        if _axes is None:
            raise _missing("the block axis check")
        _axes(src, body, axes, sizes)
    if declared:
        if _regions is None:
            raise _missing("the declared regions check")
        _regions(src, body, declared)


def equal_everywhere(a: Expr, b: Expr) -> bool:
    """Whether ``a == b`` for every value of their variables (the model decides)."""
    if _equal is None:
        raise _missing("the equality of extents")
    return _equal(a, b)
