"""Helper functions of a Numba module (:mod:`.emit`): a piece of a long
expression, a vectorized loop compiled with fast-math, a nest too deep for one
function.

A vectorized loop whose flags differ from the kernel's (``fastmath="full"``:
fast-math on vectorized loops only) moves into a helper ``_pp_vector_<k>``
compiled with ``fastmath=True`` and ``boundscheck=False``: fast-math flags
sit on each LLVM instruction and Numba sets them per function, so they stay
on the helper's arithmetic and never reach the kernel's own, non-vectorized
arithmetic.  (``inline="always"`` would lose them: it inlines Numba IR,
which is then compiled with the caller's flags.)  A loop computes nothing a
later statement reads through a variable (IR variables are immutable), so
passing the loop's free variables and buffers by argument is exact.

Python compiles at most 20 nested loops into one function and reads at most
100 levels of indentation, so a deeper nest continues in a helper
``_pp_nest_<k>`` taking the buffers and variables it uses.  Inside a
parallel loop such a helper runs its own parallel loops serially (Numba
cannot launch a parallel region from within one).  A long expression is cut
into ``_pp_part_<k>`` calls (:mod:`.pyexpr`).  Identical helpers (say,
unrolled copies) are written once.
"""

from __future__ import annotations

from polypad.ir import nodes as ir

from .functions import Function, free_inputs, parameterized
from .guards import helper_checks


class HelperWriter:
    """The emitter's helper-function methods (a mixin of :class:`.emit._Emitter`)."""

    def part(self, text: str) -> str:
        """A call of a helper ``_pp_part_<k>`` returning ``text``, one piece of a long
        expression: Numba's and LLVM's time grows faster than a function's length."""
        args, params, body = parameterized(text)
        piece = Function("{name}", params, vectorized=self.current.vectorized,
                          boundscheck=self.boundscheck, fastmath=self.fastmath)
        piece.lines.append(f"    return {body}")
        return f"{self.register(piece, 'part')}({', '.join(args)})"

    def register(self, function: Function, kind: str) -> str:
        """The name of helper ``function`` (named ``{name}``): a new one, or its twin's."""
        template = function.text()
        name = self.helper_names.get(template)
        if name is None:  # identical helpers (say, unrolled copies) are one
            name = self.helper_names[template] = f"_pp_{kind}_{len(self.helpers)}"
            self.helpers.append(template.replace("def {name}(", f"def {name}(", 1))
        return name

    def helper(self, stmt: ir.Stmt, depth: int, kind: str) -> None:
        """Emit ``stmt`` as a helper function ``_pp_<kind>_<k>`` and call it here.

        A ``"vector"`` helper is compiled with fast-math; a ``"nest"`` helper
        holds what is nested too deeply for one function.
        """
        buffers, variables = free_inputs(stmt)
        outer, saved = self.current, dict(self.expr.subst)
        args = [self.names(b) for b in buffers] + [self.expr(v) for v in variables]
        params = [self.names(b) for b in buffers] + [self.names(v) for v in variables]
        self.expr.subst.clear()
        helper = self.current = Function("{name}", params,
                                          vectorized=kind == "vector" or outer.vectorized,
                                          boundscheck=self.boundscheck,
                                          serial=outer.serial or self.in_prange > 0,
                                          fastmath=self.fastmath)
        with helper_checks(self.expr, params, args):  # the flag array, where it is used
            self.stmt(stmt, 1)
        self.current = outer
        self.expr.subst.update(saved)
        self.line(depth, f"{self.register(helper, kind)}({', '.join(args)})")
