"""Deciders: touched regions, dependences, legality, the prover, no-op detection.

Pure functions from IR (and its model) to facts with evidence; they never
rewrite IR.  Every decision is a :class:`Proved`, a :class:`Refuted` carrying
a :class:`Counterexample`, or an :class:`Unknown` with its reason.

>>> analyses.domain_touched(f, "B")          # exact set + predicate
>>> analyses.dependences(f).flow             # isl relations between instances
>>> analyses.prove(cond, analyses.context_at(f, stmt))
>>> analyses.can_merge_loops(f, "i", "j")
>>> analyses.is_no_op(f, stmt)
>>> analyses.check_bounds(f)                  # every access inside its buffer?
>>> analyses.check_block_bindings(f)          # every block axis inside its domain?
>>> analyses.bounds_precondition(f).condition # for which parameter values?
"""

from __future__ import annotations

import importlib

from .evidence import Counterexample, Element, Instance, Proved, Refuted, Unknown

# Public name -> the module that defines it.  Imported on first use, so that
# importing one decider does not pay for the others (z3 is slow to import).
_LAZY = {
    "domain_touched": "touched",
    "Touched": "touched",
    "dependences": "dataflow",
    "Dependences": "dataflow",
    "can_merge_loops": "merge",
    "is_no_op": "no_op",
    "prove": "prover",
    "known_value": "prover",
    "context_at": "context",
    "Context": "context",
    "check_bounds": "bounds",
    "check_block_bindings": "axis_bindings",
    "bounds_precondition": "precondition",
    "BoundsPrecondition": "precondition",
    "UndecidedAccess": "precondition",
    "can_remove_conditional": "conditional",
    "Removable": "conditional",
}

__all__ = [
    "Counterexample", "Element", "Instance", "Proved", "Refuted", "Unknown", *_LAZY,
]


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'analyses' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
