"""Brute force for can_remove_conditional's answers: run the function both ways.

``everywhere(f, if_stmt)`` is ``f`` with the conditional's then branch run
unconditionally.  A ``Proved`` answer is checked by running both on random
inputs (the results must agree); a ``Refuted`` one by :func:`results_differ`
(some result differs) or, where the overcompute changes what a later
statement reads without changing the result (a running maximum that
softmax subtracts again), by :func:`reads_differ`: the values every other
statement loads, in execution order, in ``f`` and in ``f`` with the body also
run where the condition is false.
"""

from __future__ import annotations

import numpy as np
from inputs_support import make_inputs

import codegen
from polypad.ir import nodes as n
from polypad.ir.fresh_copy import fresh_copy
from polypad.ir.locate import replace
from polypad.ir.visitor import walk
from polypad.semantics.interpreter import _Interpreter


def everywhere(f: n.PrimFunc, stmt: n.IfThenElse) -> n.PrimFunc:
    """``f`` with ``stmt``'s then branch in place of ``stmt``."""
    return replace(f, stmt, stmt.then_case)


def run(f: n.PrimFunc, args: list) -> list:
    """``f`` run by the reference executor on copies of ``args``: the arguments after."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    codegen.build(f, target="python")(*args)
    return args


def inputs(f: n.PrimFunc, seed: int) -> list:
    return make_inputs(f, np.random.default_rng(seed))


def same_results(f: n.PrimFunc, g: n.PrimFunc, seeds=range(3), *, args_of=None) -> bool:
    """Whether ``f`` and ``g`` leave the same arguments on random inputs (``args_of``
    draws them, from ``f`` by default)."""
    for seed in seeds:
        args = (args_of or (lambda s: inputs(f, s)))(seed)
        for a, b in zip(run(f, args), run(g, args), strict=True):
            if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True):
                return False
    return True


def results_differ(f: n.PrimFunc, stmt: n.IfThenElse, seeds=range(3)) -> bool:
    """Whether running ``stmt``'s body everywhere changes a result on some random input."""
    return not same_results(f, everywhere(f, stmt), seeds)


class _Reads(_Interpreter):
    """The reference interpreter, recording each value a statement outside ``skip`` loads."""

    def __init__(self, func: n.PrimFunc, skip: set[int]) -> None:
        super().__init__(func)
        self.skip, self.seen, self.inside = skip, [], 0

    def exec(self, stmt):
        inside = id(stmt) in self.skip
        self.inside += inside
        try:
            super().exec(stmt)
        finally:
            self.inside -= inside

    def _eval(self, expr):
        value = super()._eval(expr)
        if isinstance(expr, n.BufferLoad) and not self.inside:
            self.seen.append((expr.buffer.name, float(value)))
        return value


def reads_differ(f: n.PrimFunc, stmt: n.IfThenElse, seeds=range(3)) -> bool:
    """Whether running ``stmt``'s body where its condition is false changes a value that
    another statement loads, on some random input (``f`` has no views or vectors)."""
    copy = fresh_copy(stmt.then_case)
    both = replace(f, stmt, n.IfThenElse(stmt.condition, stmt.then_case, copy))
    ours = {id(x) for x in walk(copy) if isinstance(x, n.Stmt)}
    for seed in seeds:
        args = inputs(f, seed)
        plain, over = _Reads(f, set()), _Reads(both, ours)
        plain.run([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        over.run([a.copy() if isinstance(a, np.ndarray) else a for a in args])
        if plain.seen != over.seen:
            return True
    return False
