"""The state every schedule primitive works on: the function, the module, the trace.

Primitives are methods of family classes, one module per family (indexed in
:mod:`.primitives`), declared with :func:`primitive`: the method returns the
rewritten ``PrimFunc`` (or a pair ``(func, result)``), and the decorator
checks the arguments, installs the result and records the step.  A
primitive called from inside another primitive is not recorded again, so
``sequential_buffer_access``, which applies ``distribute`` and
``reorder_by_map``, is recorded as the one call the user made.

A primitive on a deep function (a 10,000-term sum, a 64-deep nest) runs on a
deep worker (:mod:`polypad.ir.deep`), as passes and deciders do: nothing
under it raises ``RecursionError``.

Each call the user makes runs under the schedule's time budget
(``Schedule(func, budget=...)``; the default budget of :mod:`polypad.budget`
when ``None``), shared by the primitives it applies inside.  A legality
question that does not settle in time (isl's dependences of a nest full of
``%`` indices can take minutes) raises :class:`~polypad.errors.BudgetExceeded`
and leaves the schedule as it was: a primitive is never applied unproved.
"""

from __future__ import annotations

import functools
import inspect

from polypad import budget as budgets
from polypad.arguments import expect, expect_budget
from polypad.errors import BudgetExceeded, IllegalTransformError, NotFoundError, PolypadError
from polypad.ir import nodes as n
from polypad.ir.deep import in_worker, is_deep, run_deep
from polypad.ir.loop_names import LoopRef, find_named_loop, loop_ref
from polypad.ir.verify import checked_result
from polypad.isl_failure import answering_isl_failure
from polypad.model.block_bindings import checked_bindings
from polypad.script.derive_header import attach_headers

from .primitives import PRIMITIVES, REFERENCES
from .trace import Step, Trace


def primitive(method):
    """Declare a schedule primitive: record it in the trace and install its result.

    The wrapped method returns the new ``PrimFunc``, or ``(new_func, result)``
    to hand ``result`` back to the caller.  Its arguments are checked first, as
    its entry in :data:`.primitives.PRIMITIVES` declares (a method with no
    entry, such as a primitive a subclass adds, has the ones that name blocks,
    buffers and loops checked: :func:`check_references`), and recorded as
    :meth:`ScheduleState.printable` makes them.
    """
    signature = inspect.signature(method)
    where = f"Schedule.{method.__name__}"
    entry = PRIMITIVES.get(method.__name__)
    check_arguments = entry.check_arguments if entry is not None else check_references

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if not in_worker() and is_deep(self.func):
            return run_deep(wrapper, self, *args, **kwargs)
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        check_arguments(bound.arguments, where)
        # Loop handles by their current names, for the method and the trace alike.
        for k, v in list(bound.arguments.items())[1:]:
            bound.arguments[k] = current_handles(self.func, v)
        outermost = self._depth == 0
        self._depth += 1
        try:
            if outermost:
                out = _refusing_isl_failures(where, lambda: budgets.run_within(
                    self.budget, lambda: method(*bound.args, **bound.kwargs),
                    functools.partial(_refuse_unsettled, where)))
            else:
                out = method(*bound.args, **bound.kwargs)
        finally:
            self._depth -= 1
        new_func, result = out if isinstance(out, tuple) else (out, None)
        if not isinstance(new_func, n.PrimFunc):
            raise PolypadError(f"primitive {method.__name__} returned {type(new_func).__name__}")
        checked_result(new_func, self.func, method.__name__)
        # A block a primitive made gets the header TVM needs, as parsing its script would.
        new_func = attach_headers(new_func)
        checked_bindings(new_func, self.func, method.__name__)
        self._install(new_func)
        if outermost:
            # A ``*loops`` parameter is recorded as "*loops" so the step prints and
            # replays its values positionally (``sch.fuse('i', 'j')``).
            recorded = tuple(
                ("*" + k if signature.parameters[k].kind is inspect.Parameter.VAR_POSITIONAL
                 else k, self.printable(v))
                for k, v in list(bound.arguments.items())[1:]
                # A keyword-only option left at its default (``at=None``) is not
                # printed, so adding one keeps the traces of existing calls.
                if not (signature.parameters[k].kind is inspect.Parameter.KEYWORD_ONLY
                        and v is signature.parameters[k].default))
            self.trace.append(Step(method.__name__, recorded))
        return result

    wrapper.is_primitive = True
    return wrapper


def _refuse_unsettled(where: str, error: BudgetExceeded):
    """A primitive's legality did not settle within the budget: refuse, never apply it."""
    raise BudgetExceeded(error.seconds, f"{where} left the schedule unchanged: its "
                                        "legality was not settled in time") from None


def _refusing_isl_failures(where: str, work):
    """``work()``; an ISL error it raises (other than ISL's operation limit, which
    :func:`polypad.budget.run_within` answers) refuses the primitive.

    An ISL failure is a failure of ISL, never a fact about the function: the
    legality it was deciding is unknown, so the primitive is refused, as one
    whose legality did not settle in time is, and not applied unproved.  (ISL's
    coalescing fails its own consistency check on some unions of domains with
    integer divisions: fuzzer seed 20001, case 26, a ``reorder``'s dataflow.)
    Catching it inside, at the coalescing, is no option: the failed call has
    by then rewritten, in place, maps that other sets share, and the next ISL
    call on them crashed the process (:mod:`polypad.isl_failure`).
    """
    from analyses.evidence import Unknown

    def refuse(message: str):
        raise IllegalTransformError(
            f"{where} left the schedule unchanged: its legality is unknown, ISL "
            f"failed while deciding it ({message})", Unknown(f"ISL failed: {message}"))

    return answering_isl_failure(work, refuse)


def current_handles(func: n.PrimFunc, value):
    """``value`` with each loop handle (:class:`~polypad.ir.loop_names.LoopRef`) in it,
    alone or in a list or tuple, renamed to its loop's name in ``func`` now; a handle
    whose loop is gone raises :class:`~polypad.errors.NotFoundError`."""
    if isinstance(value, LoopRef):
        return loop_ref(func, find_named_loop(func, value))
    if isinstance(value, (list, tuple)) and any(isinstance(v, LoopRef) for v in value):
        return type(value)(current_handles(func, v) for v in value)
    return value


def check_references(arguments: dict, where: str) -> None:
    """Check the arguments that name blocks, buffers and loops (ArgumentTypeError), by
    their parameter names (:data:`.primitives.REFERENCES`)."""
    for param in arguments:
        if param in REFERENCES:
            REFERENCES[param].check(arguments, where)


class ScheduleState:
    """A function (or one function of a module) being scheduled, and its trace."""

    def __init__(self, func_or_mod: n.PrimFunc | n.IRModule, *, preserve_interface: bool = False,
                 budget: float | None = None):
        expect(func_or_mod, (n.PrimFunc, n.IRModule), "func_or_mod", "Schedule")
        expect(preserve_interface, bool, "preserve_interface", "Schedule")
        #: Seconds each primitive call may take (None: polypad's default budget).
        self.budget = None if budget is None else expect_budget(budget, "Schedule")
        self.original = func_or_mod
        self.preserve_interface = preserve_interface
        self.trace = Trace()
        self._depth = 0
        if isinstance(func_or_mod, n.IRModule):
            self._funcs = {f.name: f for f in func_or_mod.funcs}
            self._current = func_or_mod.funcs[0].name
        else:
            self._funcs = {func_or_mod.name: func_or_mod}
            self._current = func_or_mod.name

    @property
    def func(self) -> n.PrimFunc:
        """The function being scheduled, as it stands now."""
        return self._funcs[self._current]

    @property
    def mod(self) -> n.IRModule:
        """The whole module as it stands now (a one-function module for a PrimFunc)."""
        name = self.original.name if isinstance(self.original, n.IRModule) else self.func.name
        return n.IRModule(name, tuple(self._funcs.values()))

    def work_on(self, name: str) -> None:
        """Schedule the module's function ``name`` from now on (recorded in the trace)."""
        expect(name, str, "name", "Schedule.work_on")
        if name not in self._funcs:
            raise NotFoundError(f"no function {name!r}; functions: {', '.join(self._funcs)}")
        self._current = name
        if self._depth == 0:
            self.trace.append(Step("work_on", (("name", name),)))

    def replay(self, trace) -> ScheduleState:
        """Apply every step of ``trace`` (recorded on another schedule) here; returns ``self``."""
        for step in trace:
            step.apply(self)
        return self

    def _install(self, new_func: n.PrimFunc) -> None:
        self._funcs[self._current] = new_func

    @staticmethod
    def printable(value):
        """``value`` as the trace keeps it: text for index maps and lambdas, names for nodes."""
        from polypad.layout import IndexMap

        if isinstance(value, str):
            return str(value)  # a loop handle as its name: a replay finds it by name
        if isinstance(value, IndexMap):
            return repr(value)[len("IndexMap("):-1]
        if isinstance(value, n.Block):
            return value.name
        if isinstance(value, n.For):
            return value.var.name
        if isinstance(value, n.Buffer):
            return value.name
        if isinstance(value, (list, tuple)):
            return type(value)(ScheduleState.printable(v) for v in value)
        if isinstance(value, n.Expr) or callable(value):
            # Pad values too: T.undef() and `lambda io, ii: A[io, 0]` print as text.
            from .pad_value import trace_text

            return trace_text(value)
        return value

    def __repr__(self) -> str:
        return f"Schedule({self.func.name}, {len(self.trace)} steps)"
