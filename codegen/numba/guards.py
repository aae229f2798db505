"""Run-time bounds checks in a Numba kernel: the accesses the bounds analysis
could not prove inside their buffer (:mod:`codegen.bounds_guards`).

Each checked access computes its index once and tests ``0 <= index <
extent`` on every axis against the array's own shape -- before Numba's
indexing, which would turn a negative index into a real element
(``B[-128]``).  In serial code the index goes through a helper that raises
(``_pp_index_<axes>``)::

    C[i] = B[_pp_index_1(A[i], B.shape, 0)]

    @numba.njit(cache=True, error_model="numpy", inline="always")
    def _pp_index_1(i0, shape, number):
        if not (0 <= i0 < shape[0]):
            raise AssertionError("polypad.bounds", number, i0)
        return i0

Only the axes the analysis could not prove each alone are tested
(:attr:`analyses.UndecidedAccess.axes`): ``_pp_index_2_0`` tests axis 0 of a
2-d index and passes both values to the error, which names the element.

Numba runs a ``numba.prange`` loop that may raise serially, and an exception
raised in a parallel region reaches Python as a ``SystemError``.  So inside
one the failed check writes to a flag array instead (``_pp_inside_<axes>``:
the check's number plus one, then the indices, where no failure is recorded
yet; two threads failing at once may mix their records, an error is raised all
the same), a store is skipped and a load reads element 0 instead (never the
element outside: a load written ``B[_g] if ok else 0`` LLVM made unconditional),
and the kernel raises the same ``AssertionError`` after the loop::

    bounds_fail = np.empty(2, np.int64)
    bounds_fail[0] = 0
    for i in numba.prange(4):
        C[i] = (lambda _g: (lambda _ok: B[_g if _ok else 0])(
            _pp_inside_1(_g, B.shape, 0, bounds_fail)))(A[i])
    if bounds_fail[0] != 0:
        raise AssertionError("polypad.bounds", bounds_fail[0] - 1, bounds_fail[1])

A helper function written for a statement inside the loop (a deep nest, a
vectorized loop under full fast-math, a piece of a long expression) takes
the flag array as a parameter.  The call wrapper turns the error into the
:class:`~polypad.errors.BoundsCheckError` the reference executor raises for
that access (:func:`.checks.kernel_error`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from polypad.ir import nodes as ir

from ..bounds_guards import BoundsGuards, helper_name, inside_test, view_shape_text

#: The first argument of the ``AssertionError`` a failed bounds check raises.
MARKER = "polypad.bounds"


class GuardState:
    """What the emitter needs to write the checks of one build: the plan, the flag
    array of the parallel loop being written (if any), and the helpers used."""

    def __init__(self, guards: BoundsGuards, width: int) -> None:
        self.guards = guards
        self.width = width  # of the flag array: 1 + the most axes of any buffer
        self.fail: str | None = None  # the flag array's name inside a prange body
        self.uses = 0  # checks written against the flag array
        #: (axes, flagged, the axes it tests)
        self.helpers: set[tuple[int, bool, tuple[int, ...]]] = set()

    def needs(self, buffer: ir.Buffer, indices) -> bool:
        """Whether the access ``buffer[indices]`` is checked (:meth:`BoundsGuards.needs`)."""
        return self.guards.needs(buffer, indices)

    def axes(self, buffer: ir.Buffer, indices) -> tuple[int, ...]:
        """The axes of ``buffer[indices]`` checked (:meth:`BoundsGuards.axes`)."""
        return self.guards.axes(buffer, indices)

    def view_axes(self, through: tuple | None) -> tuple[int, ...]:
        """The axes of a view's access checked against the view's own shape
        (:meth:`BoundsGuards.view_axes`; ``through`` is a lowered access's
        ``view_access``)."""
        return self.guards.view_axes(through)

    def call(self, buffer: ir.Buffer, name: str | None, indices, texts: list[str],
             is_store: bool, shape: str | None = None) -> str:
        """``_pp_index_<k>(i0, ..., B.shape, number)``: the checked index (serial);
        ``shape``, where given, is the text of the shape checked against (a view's)."""
        number = self.guards.number(buffer, indices, is_store)
        helper = self._helper(buffer, indices, len(texts), False)
        return f"{helper}({', '.join(texts)}, {shape or name + '.shape'}, {number})"

    def test(self, buffer: ir.Buffer, name: str | None, indices, params: list[str],
             is_store: bool, shape: str | None = None) -> str:
        """``_pp_inside_<k>(g0, ..., B.shape, number, fail)``: whether the index is
        inside, recording it in the flag array where not (a prange body)."""
        number = self.guards.number(buffer, indices, is_store)
        helper = self._helper(buffer, indices, len(params), True)
        self.uses += 1
        return (f"{helper}({', '.join(params)}, {shape or name + '.shape'}, {number}, "
                f"{self.fail})")

    def _helper(self, buffer: ir.Buffer, indices, axes: int, flagged: bool) -> str:
        """The name of the helper checking ``buffer[indices]``'s undecided axes."""
        tested = self.axes(buffer, indices)
        self.helpers.add((axes, flagged, tested))
        return helper_name("inside" if flagged else "index", axes, tested)

    def helper_sources(self) -> list[str]:
        """The module's check helpers that the kernel uses."""
        return [_helper(axes, flagged, tested)
                for axes, flagged, tested in sorted(self.helpers)]

    def open_lines(self) -> list[str]:
        """The lines before a parallel loop: its flag array, zeroed."""
        # Not np.zeros: Numba turns that into a parallel loop of its own, and the
        # failures recorded through a helper's parameter were then lost (Numba 0.68).
        return [f"{self.fail} = np.empty({self.width}, np.int64)", f"{self.fail}[0] = 0"]

    def close_lines(self) -> list[str]:
        """The lines after a parallel loop: raise the failure it recorded, if any."""
        values = ", ".join(f"{self.fail}[{k}]" for k in range(1, self.width))
        return [f"if {self.fail}[0] != 0:",
                f"    raise AssertionError({MARKER!r}, {self.fail}[0] - 1, {values})"]


@contextmanager
def flag_array(state: GuardState | None, prange: bool, lines: list[str], header: int,
               depth: int, names) -> Iterator[None]:
    """Around the body of a loop being written to ``lines`` at ``depth``, its header
    at line ``header``: for the
    outermost ``numba.prange`` of a kernel with checks, a flag array the checks
    inside record a failure in, allocated before the loop (the line is removed
    again if no check used it) and tested after it."""
    if state is None or not prange or state.fail is not None:
        yield
        return
    state.fail = names.fresh("bounds_fail")
    uses = state.uses
    opened = ["    " * depth + text for text in state.open_lines()]
    lines[header:header] = opened
    try:
        yield
        if state.uses == uses:
            for text in opened:  # by value: a line may have been inserted above them
                lines.remove(text)
        else:
            lines.extend("    " * depth + text for text in state.close_lines())
    finally:
        state.fail = None


@contextmanager
def helper_checks(printer, params: list[str], args: list[str]) -> Iterator[None]:
    """Around the writing of a helper function with ``params``, called with ``args``:
    a check inside it that uses the flag array (a prange body's) gets the array as
    a parameter; a check moved before a loop around the call (:mod:`.hoist`) is not
    seen inside (its locals are not passed)."""
    state = printer.guard
    uses = state.uses if state is not None else 0
    hoisted, printer.hoisted = printer.hoisted, {}
    try:
        yield
    finally:
        printer.hoisted = hoisted
    if state is not None and state.uses > uses:
        params.append(state.fail)
        args.append(state.fail)


def load_text(state: GuardState, printer, buffer: ir.Buffer, indices, name: str,
              through: tuple | None = None) -> str:
    """The checked load of ``buffer[indices]`` (``name`` is the array's); ``through``,
    a view's access it was lowered from, is checked against the view's shape first."""
    texts, view = _checked_texts(state, printer, buffer, indices, through, False)
    memory = state.needs(buffer, indices)
    if state.fail is None:
        if memory:
            return f"{name}[{state.call(buffer, name, indices, texts, False)}]"
        return f"{name}[{', '.join(texts)}]"
    params = [printer.names.fresh("_g") for _ in texts]
    tests = view.tests(state) if view is not None else []
    if memory:
        tests.append(state.test(buffer, name, indices, params, False))
    first = view.texts if view is not None else []
    # A failed check reads element 0 (the kernel raises after the loop), never the
    # element outside: written `B[_g] if ok else 0`, LLVM made the load unconditional
    # (a select) and read it anyway, a segfault far outside (fuzz seed 11 case 163).
    ok = printer.names.fresh("_ok")
    safe = ", ".join(f"{p} if {ok} else 0" for p in params)
    return (f"(lambda {', '.join(view.params + params if view else params)}: "
            f"(lambda {ok}: {name}[{safe}])({' and '.join(tests)}))"
            f"({', '.join(first + texts)})")


def store_lines(state: GuardState, printer, buffer: ir.Buffer, indices, name: str,
                value: Callable[[], str], through: tuple | None = None) -> list[str]:
    """The lines (unindented) of the checked store to ``buffer[indices]`` of the
    value ``value()`` prints (after the indices); ``through`` as for :func:`load_text`.

    The value runs first, then the index, then its check, as in the reference
    executor and TVM: Python evaluates an assignment's right side before its
    target, and in a prange body the value goes to a local before the test."""
    texts, view = _checked_texts(state, printer, buffer, indices, through, True)
    memory = state.needs(buffer, indices)
    if state.fail is None:
        index = state.call(buffer, name, indices, texts, True) if memory else ", ".join(texts)
        return [f"{name}[{index}] = {value()}"]
    params = [printer.names.fresh("_g") for _ in texts]
    held = printer.names.fresh("_v")
    lines = [f"{held} = {value()}"]
    tests = []
    if view is not None:
        tests = view.tests(state)
        lines += [f"{p} = {t}" for p, t in zip(view.params, view.texts, strict=True)]
    lines += [f"{p} = {t}" for p, t in zip(params, texts, strict=True)]
    if memory:
        tests.append(state.test(buffer, name, indices, params, True))
    return [*lines, f"if {' and '.join(tests)}:", f"    {name}[{', '.join(params)}] = {held}"]


class _ViewCheck:
    """The check of a view's indices (an access lowered from a view): the texts of
    the indices as written, and in a prange body the locals that hold them."""

    def __init__(self, view: ir.Buffer, indices, texts: list[str], shape: str,
                 is_store: bool, params: list[str]) -> None:
        self.view, self.indices, self.texts, self.shape = view, indices, texts, shape
        self.is_store, self.params = is_store, params

    def tests(self, state: GuardState) -> list[str]:
        """The test of the view's indices (the locals :attr:`params`), as a list."""
        return [state.test(self.view, None, self.indices, self.params, self.is_store,
                           shape=self.shape)]


def _checked_texts(state: GuardState, printer, buffer: ir.Buffer, indices,
                   through: tuple | None, is_store: bool) -> tuple[list[str], _ViewCheck | None]:
    """The texts of the flat ``indices`` and the view check (None without one).

    In serial code the view's indices are checked in the flat index's text, before
    it: ``(_pp_index_1(X[i], (8,), 1), 4 + X[i])[1]``."""
    texts = [printer(i) for i in indices]
    if through is None or not state.view_axes(through):
        return texts, None
    view, view_indices = through
    view_texts = [printer(i) for i in view_indices]
    shape = view_shape_text(view, printer)
    if state.fail is None:
        checked = state.call(view, None, view_indices, view_texts, is_store, shape=shape)
        return [f"({checked}, {texts[0]})[1]"], None
    params = [printer.names.fresh("_w") for _ in view_texts]
    return texts, _ViewCheck(view, view_indices, view_texts, shape, is_store, params)


def _helper(axes: int, flagged: bool, tested: tuple[int, ...]) -> str:
    index = [f"i{k}" for k in range(axes)]
    inside = inside_test(tested)
    name = helper_name("inside" if flagged else "index", axes, tested)
    # Inlined in Numba's IR: a parallel loop's body calls a helper it does not inline
    # (the gather in benchmarks/bench_bounds_guards.py ran 9x slower than unchecked).
    head = '@numba.njit(cache=True, error_model="numpy", inline="always")'
    if not flagged:
        returned = index[0] if axes == 1 else ", ".join(index)
        return "\n".join([
            head, f"def {name}({', '.join(index)}, shape, number):",
            f"    if not ({inside}):",
            f"        raise AssertionError({MARKER!r}, number, {', '.join(index)})",
            f"    return {returned}"])
    records = [f"        fail[{k + 1}] = i{k}" for k in range(axes)]
    return "\n".join([
        head, f"def {name}({', '.join(index)}, shape, number, fail):",
        f"    if {inside}:",
        "        return True",
        "    if fail[0] == 0:",
        "        fail[0] = number + 1",
        *records,
        "    return False"])
