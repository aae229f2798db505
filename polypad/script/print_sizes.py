"""Symbolic sizes as TVM 0.27 declares them, for the printer.

polypad makes each symbolic size (``n = T.int32()``, a quoted ``"n"`` in a
shape, a module's ``n = TypeVar("n")``) a trailing scalar parameter of its
function.  TVM 0.27 has no such parameter: it quotes an ``int32`` size at
its first use in the signature and declares it in the body,

    def main(A: T.Buffer(("n", 16), "float32"), B: T.Buffer((n,), "float32")):
        n = T.int32()

and declares an ``int64`` size at module level, ``n = TypeVar("n")``.  The
trailing parameters print that way when the parser would read them back in
the same order: the ``int32`` ones first, in the order the buffer
parameters' shapes first use them, then the ``int64`` ones; otherwise they
stay parameters (which TVM does not read: a shape names them before them).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.nodes import Buffer, PrimFunc, Var


@dataclass(frozen=True)
class Sizes:
    """The trailing parameters ``quoted`` (declared in the body) and ``type_vars``."""

    quoted: tuple[Var, ...]
    type_vars: tuple[Var, ...]

    @property
    def count(self) -> int:
        return len(self.quoted) + len(self.type_vars)

    def declaration(self) -> str | None:
        """``n, m = T.int32(), T.int32()`` for the body, None when nothing is quoted."""
        if not self.quoted:
            return None
        names = ", ".join(v.name for v in self.quoted)
        values = ", ".join(f"T.{v.dtype}()" for v in self.quoted)
        return f"{names} = {values}"


def declared_sizes(f: PrimFunc) -> Sizes | None:
    """How TVM 0.27 declares ``f``'s trailing size parameters, None where it cannot."""
    first_use: list[Var] = []
    for p in f.params:
        if isinstance(p, Buffer):
            for d in p.shape:
                if isinstance(d, Var) and d not in first_use:
                    first_use.append(d)
    suffix: list[Var] = []
    for p in reversed(f.params):
        if not (isinstance(p, Var) and p in first_use):
            break
        suffix.insert(0, p)
    if not suffix:
        return None
    quoted = [v for v in suffix if v.dtype != "int64"]
    type_vars = [v for v in suffix if v.dtype == "int64"]
    if suffix != quoted + type_vars or quoted != [v for v in first_use if v in quoted]:
        return None
    names = [v.name for v in suffix]
    if len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
        return None
    return Sizes(tuple(quoted), tuple(type_vars))
