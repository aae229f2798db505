"""A refutation found by running: two programs that compute different results.

The no-op rules refute an overcompute only at one instance that breaks
every rule.  Some overcomputes are harmful only together: with two padding
elements of value 1.0 in a row, ``B[0] = 0 + 1 + 1`` differs from the sum
without them, though neither addition alone is refuted where the other may
undo it.  Where the rules end in ``Unknown``, a concrete run decides
instead: the function and its rewrite are run by the reference executor on
inputs that honour every ``T.assume`` (:mod:`.witness_inputs`; the executor
checks them, and a draw that breaks one is discarded), and a buffer element
that ends with different values is a counterexample: a valid input on which
the rewrite computes something else.

It is exact only where a difference in the run is a difference in the
semantics, so it is tried only when:

* neither program computes with ``T.undef()``: an undefined value may
  legitimately differ between the two, and the executor fills it with one
  arbitrary choice (inside a ``T.assume`` it pins nothing, and is allowed);
* the function reads no ``T.alloc_buffer`` element before writing it, which
  would hold any value (the executor's zeros are one choice of many): ISL's
  dataflow shows that no read of an allocation goes without a write, for
  allocations outside every loop (inside one, the run is not tried);
* floats are float32 or float64, constants among them are integers, and the
  float operations are ``+``, ``-``, ``*``, ``min``, ``max``, comparisons
  and selects.  The inputs are small integers, and the executor checks that
  every float result is an integer below 2**24 (float32) or 2**53 (float64)
  in magnitude (``exact_floats``; a run that breaks this is given up): each
  operation is then exact, and the run computes what the program computes
  over the reals, and in IEEE arithmetic alike;
* the programs are small (at most :data:`MAX_ELEMENTS` buffer elements), so
  that the Python executor stays within a decision's time.

It never proves anything: no difference found leaves the ``Unknown``.
"""

from __future__ import annotations

import numpy as np

from polypad.errors import AssumptionError, PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.semantics import lower, run

from .dataflow import dependences
from .evidence import Counterexample, Element
from .witness_inputs import make_inputs

#: Largest total of argument buffer elements the executor runs.
MAX_ELEMENTS = 4096
#: The float-valued expressions that are exact on integers (checked as the run goes).
_EXACT_FLOAT = (n.FloatImm, n.BufferLoad, n.Var, n.Let, n.Add, n.Sub, n.Mul, n.Min, n.Max,
                n.Select)
_EXACT_DTYPES = ("float32", "float64")
TRIALS = 6
#: Input arrays up to this many elements are shown in the counterexample's values.
SHOWN_INPUT = 64


def refute_by_execution(original: n.PrimFunc, rewritten: n.PrimFunc, what: str
                        ) -> Counterexample | None:
    """An element that ``rewritten`` leaves with another value than ``original`` does,
    on inputs that honour the assumptions; ``None`` when none is found or the run would
    not be exact (see the module docstring).  ``what`` names the rewrite in the
    description."""
    if not runs_exactly(original, rewritten):
        return None
    # Run without codegen.build's bounds proof: the executor checks every access.
    try:
        before = lower(original, check_assumptions=True)
        after = lower(rewritten, check_assumptions=True)
    except PolypadError:
        return None
    for trial in range(TRIALS):
        try:
            args = make_inputs(original, np.random.default_rng(trial), exact=True)
        except (ValueError, PolypadError):
            return None
        want, got = _copy(args), _copy(args)
        try:
            run(before, *want, exact_floats=True)
            run(after, *got, exact_floats=True)
        except AssumptionError:
            continue  # the draw broke an assumption: not a valid input
        except (PolypadError, ArithmeticError):
            return None  # an access outside a buffer, or a float that may have rounded
        found = _difference(original, args, want, got, what)
        if found is not None:
            return found
    return None


def runs_exactly(original: n.PrimFunc, rewritten: n.PrimFunc, *, cheap: bool = False) -> bool:
    """Whether :func:`refute_by_execution` would run the two (see the module docstring).

    ``cheap`` does not ask the dataflow question about allocations (an ISL
    dataflow of its own): a function that allocates is then answered
    ``False``, so ``True`` stays certain.
    """
    if not (_runnable(original) and _runnable(rewritten)):
        return False
    if cheap:
        return not any(isinstance(x, n.Allocate) for x in walk(original.body))
    return _reads_only_written(original)


def _reads_only_written(f: n.PrimFunc) -> bool:
    """Whether ``f`` provably reads no element of its allocations before writing it: its
    result is then one value, not one of many the executor's zero-filling picks from."""
    if not any(isinstance(x, n.Allocate) for x in walk(f.body)):
        return True
    if any(isinstance(x, n.Allocate) for loop in walk(f.body) if isinstance(loop, n.For)
           for x in walk(loop.body)):
        return False  # the dataflow is exact about allocations outside every loop only
    try:
        return dependences(f).unwritten_reads.is_empty()
    except PolypadError:
        return False


def _runnable(f: n.PrimFunc) -> bool:
    """No ``T.undef()``, only exact float operations on float32 or float64, integer float
    constants, and small buffers."""
    total = 0
    for buffer in (p for p in f.params if isinstance(p, n.Buffer)):
        size = 1
        for extent in buffer.shape:
            if not isinstance(extent, int):
                return False  # a symbolic shape: sized by a drawn parameter, maybe large
            size *= extent
        total += size
    if total > MAX_ELEMENTS:
        return False
    # Inside a T.assume, T.undef() pins nothing (``B[i] == T.undef()`` holds for any
    # value), and the executor does not check it: any drawn value is a valid input.
    in_assume = {id(x) for a in walk(f.body) if isinstance(a, n.Call) and a.op == "assume"
                 for x in walk(a)}
    for node in walk(f.body):
        if id(node) in in_assume:
            continue
        if isinstance(node, n.Call):
            return False  # T.undef(), or a math function, which rounds
        dtype = getattr(node, "dtype", "")
        if isinstance(node, n.Expr) and dtypes.is_float(dtype) and (
                dtype not in _EXACT_DTYPES or not isinstance(node, _EXACT_FLOAT)
                or isinstance(node, n.FloatImm) and not float(node.value).is_integer()):
            return False  # a division, a cast, a narrow float or a fraction may round
    return True


def _copy(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _difference(f: n.PrimFunc, args: list, want: list, got: list, what: str
                ) -> Counterexample | None:
    params = {p.name: int(a) for p, a in zip(f.params, args, strict=True)
              if isinstance(p, n.Var)}
    for param, a, b in zip(f.params, want, got, strict=True):
        if not isinstance(param, n.Buffer):
            continue
        differs = np.argwhere(a != b)
        if len(differs):
            index = tuple(int(k) for k in differs[0])
            element = Element(param.name, index)
            name = f"{param.name}[{', '.join(map(str, index))}]"
            inputs = {f"input {p.name}": v.tolist() for p, v in zip(f.params, args, strict=True)
                      if isinstance(p, n.Buffer) and v.size <= SHOWN_INPUT}
            return Counterexample(
                f"{what} leaves {name} = {_scalar(b[index])} where the function leaves "
                f"{_scalar(a[index])}, on inputs that satisfy every T.assume",
                element=element, params=params,
                values={f"{name} before": _scalar(a[index]),
                        f"{name} after": _scalar(b[index]), **inputs})
    return None


def _scalar(value):
    return value.item() if hasattr(value, "item") else value
