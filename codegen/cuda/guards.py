"""Run-time bounds checks in a ``numba.cuda`` kernel: the accesses the bounds
analysis could not prove inside their buffer (:mod:`codegen.bounds_guards`).

A CUDA kernel cannot raise.  Every kernel of a build with checks takes one
more parameter, ``bounds_fail``, a small ``int64`` device array the host
makes zero for each call.  A check that fails records itself there -- the
check's number plus one, swapped in atomically where the array holds 0, so
that the first failure wins, then its index on each axis -- and the access
is skipped: a store does not happen, a load reads element 0 instead (of a
buffer with no elements, which may be, it reads nothing and gives 0).  After
the launches the host reads the array and raises the
:class:`~polypad.errors.BoundsCheckError` the reference executor raises for
that access (:mod:`.runtime`)::

    C[i] = A[_pp_at_1(B[i], A.shape, 0, bounds_fail)] * np.float32(2.0)

    _v = C[i]
    _g = B[i]
    if _pp_inside_1(_g, D.shape, 1, bounds_fail):
        D[_g] = _v

A store evaluates its value first, then its index, then the check (TVM's
order, the reference executor's): where both the value's load and the store
are outside, the load's failure is the one recorded.

The index is computed once per access, on the buffer's declared shape: a
local buffer with a checked access is neither cut to a thread's box
(:mod:`.compact`) nor made one variable per element (:mod:`.scalars`)
(:meth:`CudaGuards.checked_locals`), a checked access never goes wide
(:mod:`.wide_runs`), and an element the emitter keeps in a register across a
loop is one whose accesses need no check.
"""

from __future__ import annotations

from collections.abc import Callable

from polypad.ir import nodes as ir
from polypad.ir.visitor import walk

from ..bounds_guards import BoundsGuards, helper_name, inside_test, view_shape_text

#: The name of the kernels' flag-array parameter.
FLAG = "bounds_fail"


class CudaGuards:
    """The checks of one build's kernels: the plan, the flag array's name, the
    device helpers used."""

    def __init__(self, guards: BoundsGuards, flag: str) -> None:
        self.guards = guards
        self.flag = flag
        self.helpers: set[tuple[str, int, tuple[int, ...]]] = set()  # kind, axes, tested

    def needs(self, buffer: ir.Buffer, indices) -> bool:
        """Whether the access ``buffer[indices]`` is checked (:meth:`BoundsGuards.needs`)."""
        return self.guards.needs(buffer, indices)

    def checked_locals(self, func: ir.PrimFunc) -> set[ir.Buffer]:
        """The local buffers of ``func`` with an access this build checks: they keep
        their declared shape and stay arrays, since a thread's box (:mod:`.compact`)
        and one variable per element (:mod:`.scalars`) are sized from what the
        accesses touch, an access outside the buffer included, which would then find
        a slot of its own instead of failing its check."""
        return {x.buffer for x in walk(func.body)
                if isinstance(x, (ir.BufferLoad, ir.BufferStore))
                and x.buffer.scope == "local" and self.needs(x.buffer, x.indices)}

    def helper_sources(self) -> list[str]:
        """The device functions the checks emitted so far call, one per kind and rank."""
        return [_helper(kind, axes, tested) for kind, axes, tested in sorted(self.helpers)]

    def _call(self, kind: str, buffer: ir.Buffer, indices, texts: list[str], name: str | None,
              is_store: bool, extra: str = "", shape: str | None = None) -> str:
        number = self.guards.number(buffer, indices, is_store)
        # The axes the analysis could not prove each alone (:mod:`analyses.bounds_axes`);
        # a buffer with no element fails on any (``_pp_none``).
        tested = tuple(range(len(texts))) if kind == "none" else \
            self.guards.axes(buffer, indices)
        self.helpers.add((kind, len(texts), tested))
        shape = "" if kind == "none" else f"{shape or name + '.shape'}, "
        return (f"{helper_name(kind, len(texts), tested)}({', '.join(texts)}, {shape}{number}, "
                f"{self.flag}{extra})")

    def view_test(self, printer, through: tuple, texts: list[str], is_store: bool) -> str:
        """The test of a view's indices (``texts``, of ``through``, a lowered access's
        ``view_access`` whose axes the analysis left undecided) against the view's
        own shape, recording a failure."""
        view, indices = through
        return self._call("inside", view, indices, texts, None, is_store,
                          shape=view_shape_text(view, printer))


def load_text(state: CudaGuards, printer, buffer: ir.Buffer, indices, name: str,
              zero: str, through: tuple | None = None) -> str:
    """The checked load of ``buffer[indices]`` (``name`` is the array's, ``zero`` the
    text of its dtype's zero); ``through``, the view access it was lowered from, is
    checked against the view's shape first, a failure reading element 0 instead."""
    texts = [printer(i) for i in indices]
    if state.guards.view_axes(through):  # 4 + X[i] if _pp_inside_1(X[i], ...) else 0
        view = state.view_test(printer, through, [printer(i) for i in through[1]], False)
        texts = [f"({texts[0]} if {view} else 0)"]
    text = f"{name}[{state._call('at', buffer, indices, texts, name, False)}]"
    if all(isinstance(e, int) and e > 0 for e in buffer.shape):
        return text
    # No element to read in place of a bad one where the buffer is empty.
    empty = state._call("none", buffer, indices, texts, name, False, f", {zero}")
    return f"({text} if {name}.size != 0 else {empty})"


def store_lines(state: CudaGuards, printer, buffer: ir.Buffer, indices, names,
                statement: Callable[[list[str]], str],
                through: tuple | None = None) -> list[str]:
    """The lines (unindented) of a checked store: the index once in locals, the test,
    then ``statement(locals)``, the store written with those locals as its index;
    ``through`` (a view's access) tested first, as for :func:`load_text`."""
    view, lines = None, []
    if state.guards.view_axes(through):
        view_local = [names.fresh("_w") for _ in through[1]]
        view = state.view_test(printer, through, view_local, True)
        lines = [f"{w} = {printer(i)}" for w, i in zip(view_local, through[1], strict=True)]
    texts = [printer(i) for i in indices]
    local = [names.fresh("_g") for _ in texts]
    lines += [f"{g} = {t}" for g, t in zip(local, texts, strict=True)]
    test = state._call("inside", buffer, indices, local, names(buffer), True)
    if view is not None:
        test = f"{view} and {test}"
    return [*lines, f"if {test}:", f"    {statement(local)}"]


def _helper(kind: str, axes: int, tested: tuple[int, ...]) -> str:
    index = [f"i{k}" for k in range(axes)]
    inside = inside_test(tested)
    name = helper_name(kind, axes, tested)
    record = ["    if cuda.atomic.compare_and_swap(fail, 0, number + 1) == 0:",
              *(f"        fail[{k + 1}] = i{k}" for k in range(axes))]
    head = "@cuda.jit(device=True)"
    if kind == "none":
        return "\n".join([head, f"def {name}({', '.join(index)}, number, fail, zero):",
                          *record, "    return zero"])
    found, missed = ("True", "False") if kind == "inside" else (
        index[0] if axes == 1 else ", ".join(index), "0" if axes == 1 else
        ", ".join("0" for _ in index))
    return "\n".join([head, f"def {name}({', '.join(index)}, shape, number, fail):",
                      f"    if {inside}:", f"        return {found}", *record,
                      f"    return {missed}"])
