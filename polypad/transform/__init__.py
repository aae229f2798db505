"""Passes: each a pure function ``PrimFunc -> PrimFunc`` in a module of its own.

The two lowering passes, :func:`remove_assume` and :func:`remove_store_undef`,
live with the rest of lowering in :mod:`polypad.semantics`, below the analyses,
which run lowered functions; they are passes here too.
"""

from polypad.semantics.remove_assume import remove_assume
from polypad.semantics.remove_store_undef import remove_store_undef

from .hoist_expression import HoistedConditionals, HoistedLetBindings, hoist_expression
from .reduce_loop_extents import reduce_loop_extents
from .remove_branching_through_overcompute import (
    BranchingReport,
    explain_branching_through_overcompute,
    remove_branching_through_overcompute,
)
from .remove_no_op import remove_no_op
from .remove_overcompute_through_branching import (
    STEPS,
    hoist_padding_conditionals,
    introduce_padding_conditionals,
    remove_overcompute_through_branching,
    remove_padding_no_ops,
    simplify_padding_conditionals,
)
from .simplify import simplify

__all__ = [
    "BranchingReport", "explain_branching_through_overcompute",
    "remove_branching_through_overcompute",
    "HoistedConditionals", "HoistedLetBindings", "hoist_expression", "reduce_loop_extents",
    "remove_assume", "remove_no_op", "remove_store_undef", "simplify",
    "STEPS", "hoist_padding_conditionals", "introduce_padding_conditionals",
    "remove_overcompute_through_branching", "remove_padding_no_ops",
    "simplify_padding_conditionals",
]
