"""Which accesses a compiled kernel checks at run time: those the bounds analysis
could not prove inside their buffer, and nothing else.

:func:`analyses.bounds_precondition` proves most accesses inside their
buffer, wherever the precondition a call is checked against holds.  What it
cannot decide -- a data-dependent index (``B[A[i]]``), one that is not
affine, one in which ``min``, ``//`` or ``%`` may take a wrapped operand
(``B[T.min(i + 2, n - 1)]`` over ``int8``) -- it lists one by one
(:attr:`~analyses.BoundsPrecondition.undecided`).  A target's code checks
exactly those, each time it runs one: ``0 <= index < extent`` on each axis
the analysis could not prove alone (:attr:`~analyses.UndecidedAccess.axes`,
:mod:`analyses.bounds_axes`: ``A[B[i], j]`` checks its first axis only), the
index computed once, and a failure raises the
:class:`~polypad.errors.BoundsCheckError` the reference executor raises for
the same access (:meth:`BoundsGuards.error`).

The analysis reads the function as written, the kernel runs it lowered
(:mod:`polypad.semantics.lowering`).  Lowering keeps an ordinary access as it
is (IR equality is exact: the same buffer, the same index expressions over
the same variables), so an access of the lowered function is left unchecked
only when its ``(buffer, indices)`` is among the
:attr:`~analyses.BoundsPrecondition.proved` ones.  An access lowering (or the
emitter) writes anew -- a vector's lanes, a view's flat index -- is checked
as an undecided one: more checks than needed, never fewer.  A function whose
every access is proved gets no check at all; one whose analysis ran out of
time gets one on every access.

An access through a view is checked against the view's own shape too, as
the analysis checks it (:mod:`polypad.semantics.lower_views`): the lowered
flat access keeps the access as written (``view_access``), whose key decides
the view's axes to check (:meth:`BoundsGuards.view_axes`), before the flat
index's check against the memory.  A failure names the view, its element and
its indices as written.
"""

from __future__ import annotations

from analyses.evidence import Unknown
from polypad.errors import BoundsCheckError
from polypad.ir import nodes as ir
from polypad.ir.location import source_location as location  # the emitters' name
from polypad.ir.nodes import Buffer, PrimFunc
from polypad.ir.visitor import children, walk
from polypad.semantics.interpreter import outside_message


class BoundsGuards:
    """The run-time bounds checks of one build.

    ``proved`` are the access keys (``(buffer, indices)``) proved inside;
    ``everything`` checks every access (no analysis to trust);
    ``undecided`` are the analysis's :class:`~analyses.UndecidedAccess` list,
    for the axes each checks.  An emitter asks :meth:`needs` for
    each access it writes and :meth:`number` for the number its check passes
    when it fails; :meth:`error` turns that number and the index values into
    polypad's error.
    """

    def __init__(self, func: ir.PrimFunc, proved: frozenset = frozenset(),
                 undecided: tuple = (), everything: bool = False) -> None:
        self.func = func
        self.proved = proved
        self.everything = everything
        #: Per undecided access key, the axes it may leave on (over all its
        #: occurrences); an access lowering wrote anew is not among them.
        self._axes: dict[tuple, set[int]] = {}
        for u in undecided:
            self._axes.setdefault(u.key, set()).update(u.checked_axes)
        #: Where the statement being emitted stands (:func:`location`), set by the
        #: emitter: an access written alike in two statements gets a check of each.
        self.at: str | None = None
        #: The checked accesses, numbered as :meth:`number` gave them out:
        #: ``(buffer, indices, is_store)``, and the location of each.
        self.accesses: list[tuple[ir.Buffer, tuple, bool]] = []
        self._wheres: list[str | None] = []
        self._numbers: dict[tuple, int] = {}

    def needs(self, buffer: ir.Buffer, indices) -> bool:
        """Whether the access ``buffer[indices]`` is checked."""
        return bool(self.axes(buffer, indices))

    def axes(self, buffer: ir.Buffer, indices) -> tuple[int, ...]:
        """The axes of ``buffer[indices]`` to check: every one under
        ``boundscheck=True`` and for an access the analysis did not see, none for
        one it proved, else those it could not prove each alone."""
        key = (buffer, tuple(indices))
        if self.everything or (key not in self.proved and key not in self._axes):
            return tuple(range(len(key[1])))
        if key in self.proved:
            return ()
        return tuple(sorted(self._axes[key]))

    def view_axes(self, through: tuple | None) -> tuple[int, ...]:
        """The axes of an access lowered from a view to check against the view's own
        shape: ``through`` is its ``view_access`` (the view and its indices as
        written, :mod:`polypad.semantics.lower_views`), decided as :meth:`axes`
        decides the access as written; none where ``through`` is None."""
        return () if through is None else self.axes(*through)

    def number(self, buffer: ir.Buffer, indices, is_store: bool) -> int:
        """The number of the check of ``buffer[indices]`` (one per distinct access in
        each statement, :attr:`at`)."""
        key = (buffer, tuple(indices), is_store, self.at)
        if key not in self._numbers:
            self._numbers[key] = len(self.accesses)
            self.accesses.append(key[:3])
            self._wheres.append(self.at)
        return self._numbers[key]

    def error(self, number: int, values, shape) -> BoundsCheckError:
        """The error of check ``number`` failing with index ``values`` on an array of
        ``shape``, worded as the reference executor's."""
        buffer, indices, is_store = self.accesses[number]
        values = [int(v) for v in values][:len(indices)]
        where = self._wheres[number]
        if where is None:
            # Only for a check printed outside every statement, which no emitter does
            # today (each sets :attr:`at` per statement): the first statement of the
            # lowered function holding the access.
            where = statement_locations(self.func).get((buffer, indices), "")
        return BoundsCheckError(outside_message(
            "store to" if is_store else "load of", buffer, indices, values, shape,
            self.func.name, where))


def plan(found, lowered: ir.PrimFunc, mode: bool | None) -> BoundsGuards | None:
    """The checks of a build of ``lowered``, given what
    :func:`analyses.bounds_precondition` ``found`` on the function as written
    (an ``Unknown`` when it ran out of time) and the build's ``boundscheck``
    ``mode``: ``None`` (the default) checks the undecided accesses, ``False``
    nothing, ``True`` every access.  None when nothing is checked."""
    if mode is False:
        return None
    if isinstance(found, Unknown):
        return BoundsGuards(lowered, everything=True)
    if mode is True:
        return BoundsGuards(lowered, undecided=found.undecided, everything=True)
    if not found.undecided:
        return None
    return BoundsGuards(lowered, found.proved, found.undecided)


def bounds_error(func: PrimFunc, guards: BoundsGuards, number: int, values,
                 args: list) -> BoundsCheckError:
    """The error of failed bounds check ``number`` with index ``values``, on the
    call's arguments ``args`` (the array's shape is read from them)."""
    buffer = guards.accesses[number][0]
    arrays = {p: a for p, a in zip(func.params, args, strict=True) if isinstance(p, Buffer)}
    array = arrays.get(buffer)  # a parameter's; else the shape the function gives
    shape = tuple(array.shape) if array is not None else tuple(
        _extent(e, func, args) for e in buffer.shape)
    return guards.error(number, values, shape)


def _extent(extent, func: PrimFunc, args: list) -> int | str:
    """A buffer extent's value in a call: a constant, or a scalar argument."""
    if isinstance(extent, ir.Var) and extent in func.params:
        return int(args[func.params.index(extent)])
    if isinstance(extent, ir.IntImm):
        return int(extent.value)
    return extent if isinstance(extent, int) else extent.name  # a let's value: its name


def statement_locations(func: ir.PrimFunc) -> dict[tuple, str]:
    """`` at file:line`` of the statement each access of ``func`` stands in (its first,
    where it stands in several), as the reference executor names it: the innermost
    statement whose own expressions hold it (a loop's extent, an ``if``'s condition,
    a store's indices and value).  The fallback of :meth:`BoundsGuards.error` for a
    check printed outside every statement."""
    found: dict[tuple, str] = {}
    for stmt in walk(func.body):
        if not isinstance(stmt, ir.Stmt) or stmt.span is None:
            continue
        where = location(stmt)
        if isinstance(stmt, ir.BufferStore):
            found.setdefault((stmt.buffer, tuple(stmt.indices)), where)
        for child in children(stmt):
            if isinstance(child, ir.Expr):
                for x in walk(child):
                    if isinstance(x, ir.BufferLoad):
                        found.setdefault((x.buffer, tuple(x.indices)), where)
    return found


def declared_buffers(func: ir.PrimFunc) -> list[ir.Buffer]:
    """Every buffer ``func`` declares: its parameters', then each allocation's and
    view's, in program order."""
    buffers = [p for p in func.params if isinstance(p, ir.Buffer)]
    return buffers + [x.buffer for x in walk(func.body)
                      if isinstance(x, (ir.Allocate, ir.DeclBuffer))]


def max_axes(func: ir.PrimFunc) -> int:
    """The most axes of any buffer of ``func``: a flag array records a failed check's
    index in that many slots after its number."""
    viewed = [x.view_access[0] for x in walk(func.body)
              if isinstance(x, (ir.BufferLoad, ir.BufferStore)) and x.view_access is not None]
    return max((len(b.shape) for b in declared_buffers(func) + viewed), default=1)


def view_shape_text(view: ir.Buffer, printer) -> str:
    """The text of ``view``'s own shape, a tuple its accesses are checked against (its
    extents constants or scalar parameters, :func:`.lower_views.checks_own_shape`)."""
    return "(" + ", ".join(str(d) if isinstance(d, int) else printer(d)
                           for d in view.shape) + ",)"


def helper_name(kind: str, axes: int, tested: tuple[int, ...]) -> str:
    """``_pp_<kind>_<axes>``, the helper testing every axis of an index of ``axes``;
    ``_pp_<kind>_<axes>_<tested>`` (``_pp_index_2_0``) one testing those only."""
    if tested == tuple(range(axes)):
        return f"_pp_{kind}_{axes}"
    return f"_pp_{kind}_{axes}_{''.join(str(k) for k in tested)}"


def inside_test(tested: tuple[int, ...]) -> str:
    """``0 <= i0 < shape[0] and ...`` over the ``tested`` axes (all of an index's
    values still reach the error, which names the element)."""
    return " and ".join(f"0 <= i{k} < shape[{k}]" for k in tested)
