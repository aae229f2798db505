"""Every error polypad raises on purpose.  One hierarchy, rooted at
:class:`PolypadError`, so a caller can catch them all with one clause."""

from __future__ import annotations


class PolypadError(Exception):
    """Base of every error polypad raises for bad input or a refused request."""


class ArgumentTypeError(PolypadError, TypeError):
    """A public function got an argument of a type it does not take, such as
    ``pp.parse(None)`` or ``pp.transform.simplify("f")``; raised at the front
    door, before any work.  The message names the function, the parameter,
    what it takes and what it got.  (A built kernel's own arguments raise
    :class:`ArgumentError`.)"""


class ArgumentValueError(PolypadError, ValueError):
    """A public function got an argument of the right type whose value it does not
    accept, such as ``kind="readwrite"`` for ``analyses.domain_touched`` or a
    budget that is not positive; the message lists what it accepts."""


class ParseError(PolypadError, SyntaxError):
    """Script text uses syntax polypad does not support, or is malformed.

    Carries ``filename``, ``lineno`` (1-based), ``col`` (1-based, as editors
    count) and the offending source line; ``str()`` shows a caret under the
    column.
    """

    def __init__(self, message: str, filename: str = "<string>", lineno: int = 1,
                 col: int = 1, source_line: str = ""):
        self.message = message
        self.col = col
        super().__init__(message)
        # SyntaxError's own attributes, so tracebacks and IDEs point at it.
        self.filename, self.lineno, self.offset, self.text = filename, lineno, col, source_line

    def __str__(self) -> str:
        where = f"{self.filename}:{self.lineno}:{self.col}: {self.message}"
        if not self.text:
            return where
        line = self.text.rstrip("\n")
        return f"{where}\n    {line}\n    {' ' * (self.col - 1)}^"


class DTypeError(PolypadError, TypeError):
    """Operands or a stored value have dtypes that cannot be combined."""


class VerifyError(PolypadError):
    """The IR is not well formed (see :func:`polypad.ir.verify.verify`)."""


class BindingError(VerifyError):
    """A schedule primitive built a block whose axis binding leaves the axis's domain at
    an instance where the block runs (``vj = T.axis.spatial(n, j_0 * 8 + j_1)`` taking
    ``n``): checked after every primitive when ``POLYPAD_VERIFY_PASSES`` is set, as the
    test suite and the fuzzer set it (:mod:`polypad.model.block_bindings`).  ``primitive``,
    ``block`` and ``axis`` name them; ``evidence`` is the
    :class:`~polypad.model.block_axes.Violation`: the value the binding takes and the
    instance (loop counters outer first, then symbolic parameters)."""

    def __init__(self, message: str, primitive: str = "", block: str = "", axis: str = "",
                 evidence=None):
        self.primitive, self.block, self.axis, self.evidence = primitive, block, axis, evidence
        super().__init__(message)


class NotAffineError(PolypadError):
    """An analysis needs a quasi-affine expression and got something else.

    ``expr`` is the offending expression; the message prints it in script
    syntax.  Where the expression is refused because its arithmetic may wrap
    around its integer dtype, ``evidence`` is the
    :class:`~polypad.model.overflow.Wrap`: the operation, its exact value and the
    first point (loop counters outer first, then parameters) where it leaves the
    dtype; the message shows it too.  ``None`` otherwise.
    """

    def __init__(self, message: str, expr=None, evidence=None):
        self.expr = expr
        self.evidence = evidence
        super().__init__(message)


class UnmodelledError(NotAffineError):
    """A function holds a construct the analyses cannot model: an opaque TVM intrinsic
    (``T.tvm_struct_get``, ``T.call_extern``), ``T.attr``, ``assert``, ``return``, a
    buffer over memory polypad does not know, a pointer parameter.  The message
    names it and its line.  A :class:`NotAffineError`, so that what gives up on an
    index it cannot model gives up on this as well; the deciders answer ``Unknown``."""


class NonInjectiveError(PolypadError):
    """A layout maps two logical indices onto one; ``collision`` names them."""

    def __init__(self, message: str, collision=None):
        self.collision = collision
        super().__init__(message)


class IllegalTransformError(PolypadError):
    """A schedule primitive refused; ``evidence`` holds the counterexample."""

    def __init__(self, message: str, evidence=None):
        self.evidence = evidence
        super().__init__(message)


class AliasError(PolypadError):
    """A primitive that rewrites the accesses of one buffer (a cache, a new layout, a new
    scope or place) met another buffer over the same memory (a view, ``T.decl_buffer(...,
    data=A.data)``), whose accesses it would not follow; the message names both."""


class NotFoundError(PolypadError, LookupError):
    """A block, loop, buffer or statement named by a caller is not in the function
    (or the name is ambiguous); the message lists what is there."""


class BuildError(PolypadError):
    """Code generation could not lower or compile a function."""


class ArgumentError(BuildError, TypeError):
    """A built kernel was called with arguments that do not match its parameters
    (count, array shape, dtype, contiguity, or a scalar inconsistent with a
    symbolic extent); the message names the parameter."""


class BuildArgumentError(ArgumentTypeError, BuildError):
    """``codegen.build`` or ``codegen.lower`` got something other than a
    ``PrimFunc`` (an ``IRModule``: pick one function with ``module["name"]``),
    or an option of the wrong type; both an :class:`ArgumentTypeError` and a
    :class:`BuildError`."""


class ExecutionError(PolypadError, RuntimeError):
    """The reference executor met a fault at run time, such as an access outside
    a buffer; the message names the buffer, the indices and the statement."""


class InexactArithmeticError(ExecutionError):
    """A run asked to stay exact (``codegen.interpreter.run(..., exact_floats=True)``)
    produced a float that may have rounded: not an integer, or too large for its
    dtype to hold every integer up to it."""


class OutOfBoundsError(BuildError):
    """An access would fall outside its buffer: ``codegen.build`` refused a
    function that leaves a buffer for every parameter value its assumptions
    allow, or a built kernel was called with parameter values outside its
    bounds precondition (``Kernel.precondition``; checked before anything
    runs, so nothing was written).  ``evidence`` is the
    :class:`~analyses.Counterexample`: the statement instance, the element and
    the scalar parameter values; for a call, ``condition`` is the precondition
    and ``values`` the parameter values passed (``{"n": 29}``)."""

    def __init__(self, message: str, evidence=None, condition=None,
                 values: dict | None = None):
        self.evidence = evidence
        self.condition = condition
        self.values = dict(values or {})
        super().__init__(message)


class RaceError(BuildError):
    """``codegen.build(f, target="cuda")`` refused a function whose thread-bound loops
    race: two threads of one block, or two blocks, touch one element, at least one
    writes, and no barrier can order them as the serial program does (or the barrier
    that would sits where not every thread of the block reaches it).  ``evidence``
    is the :class:`~analyses.Counterexample`: both instances, both threads (block
    and thread indices) and the element (:mod:`analyses.gpu_sync`)."""

    def __init__(self, message: str, evidence=None):
        self.evidence = evidence
        super().__init__(message)


class BoundsCheckError(ExecutionError, IndexError):
    """A run-time access outside a buffer: always in the reference executor, and
    in a Numba or cuda kernel where the bounds analysis could not prove the
    access inside (every access with ``boundscheck=True``).  An ``IndexError``
    too, as numpy would raise."""


class AssumptionError(ExecutionError):
    """A ``T.assume`` was false at run time: always checked by the reference
    executor, and by a Numba kernel built with ``check_assumptions=True``.

    ``assumption`` is the condition, ``values`` the values of its variables and
    of the buffer elements it reads (``{"n": 20, "A[3]": 1.5}``), as far as
    they could be read; the message shows both in script syntax.
    """

    def __init__(self, message: str, assumption=None, values: dict | None = None):
        self.assumption = assumption
        self.values = dict(values or {})
        super().__init__(message)


class AssertionFailedError(ExecutionError):
    """A plain ``assert c, msg`` (a packed function's check on scalar values,
    :func:`polypad.ir.opaque.is_plain_check`) was false at run time.  Unlike a
    ``T.assume``, every target always checks it: it is part of the program.

    ``condition`` is the condition, ``message`` TVM's message (``"n must be a
    multiple of 4"``; ``"ValueError: ..."`` for TVM's ``(kind, [parts])``), and
    ``values`` the values of the condition's variables (``{"n": 6}``).
    """

    def __init__(self, message: str, condition=None, assert_message: str = "",
                 values: dict | None = None):
        self.condition = condition
        self.assert_message = assert_message
        self.values = dict(values or {})
        super().__init__(message)


class LoopRangeError(ExecutionError, OverflowError):
    """A loop's counter would leave its dtype: at loop entry, the first value
    ``min`` or the last ``min + extent - 1`` of a non-empty loop does not fit
    the loop variable's dtype (``for i in T.serial(n, n + 10)`` with an
    ``int32`` ``i`` and ``n = 2147483640``).  The analyses take ``i`` to run
    exactly over ``[min, min + extent)``, so both executors refuse such a loop
    rather than wrap its counter; a Numba kernel checks only the loops whose
    range polypad cannot prove fits.  ``var``, ``dtype``, ``first`` and
    ``last`` say which loop and which values."""

    def __init__(self, message: str, var: str = "", dtype: str = "",
                 first: int = 0, last: int = 0):
        self.var, self.dtype, self.first, self.last = var, dtype, first, last
        super().__init__(message)


class BudgetExceeded(PolypadError, TimeoutError):
    """A question ran out of its time budget (see :mod:`polypad.budget`).

    Deciders turn it into ``Unknown`` and passes into "unchanged"; it reaches
    a caller only from analyses that return no decision (dependences, touched
    regions).  ``seconds`` is the budget that ran out.
    """

    def __init__(self, seconds: float, what: str | None = None):
        self.seconds = seconds
        prefix = f"{what}: " if what else ""
        super().__init__(f"{prefix}the time budget of {seconds:g} s ran out "
                         "(pass budget=... or polypad.set_default_budget to allow more)")


class IslFailure(PolypadError, RuntimeError):
    """ISL failed inside a computation that has no ``Unknown`` to answer with: an
    analysis that returns sets (``analyses.dependences``, ``domain_touched``...) or
    ``codegen.build``.  ISL's failing its own consistency check (its coalescing, on
    some unions of domains with integer divisions) is a failure of ISL, never a fact
    about the function; a decider answers ``Unknown`` instead, a pass returns its
    input unchanged (:mod:`polypad.isl_failure`).  ``operation`` names the polypad
    call that failed, ``reason`` quotes ISL (which names its own operation)."""

    def __init__(self, operation: str, reason: str):
        self.operation, self.reason = operation, reason
        super().__init__(f"{operation} failed: ISL failed its own check ({reason})")


class TooDeepError(PolypadError):
    """An expression or statement is nested more deeply than polypad can walk: some
    40,000 levels (see :mod:`polypad.ir.deep`), or what Python's own parser reads
    (a script then gets a :class:`ParseError` that says so)."""


class MissingDependencyError(PolypadError, ImportError):
    """An optional part of polypad needs a package that is not installed, such as
    :mod:`polypad.tvm` without TVM; the message names the extra that installs it
    (``pip install "polypad[tvm]"``)."""


class TVMInteropError(PolypadError):
    """TVM refused what :mod:`polypad.tvm` handed it: ``to_tvm`` of a function that uses
    what TVM 0.27 does not have (``T.undef()``, a thread axis TVM does not know), or
    ``from_tvm`` of an object that is not a TVM ``PrimFunc`` or ``IRModule``.  The
    message quotes TVM's own complaint."""
