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
* float inputs are small integers and the float operations are ``+``,
  ``-``, ``*``, ``min``, ``max``, comparisons and selects, and every value
  that ends in a buffer stays below 2**20 in magnitude: float32 arithmetic
  is then exact, so the real-number view of the prover and IEEE agree;
* the function's result does not depend on memory it reads before writing it
  (it is run twice, its allocations starting as 0 and as 7): where it does,
  its result is not one value and a rewrite may pick another;
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

from .evidence import Counterexample, Element
from .witness_inputs import make_inputs

#: Largest total of buffer elements (arguments and allocations) the executor runs.
MAX_ELEMENTS = 4096
#: Below this magnitude float32 holds every integer exactly, with room for sums.
EXACT_LIMIT = 2.0 ** 20
#: The float-valued expressions that are exact on small integers.
_EXACT_FLOAT = (n.FloatImm, n.BufferLoad, n.Var, n.Let, n.Add, n.Sub, n.Mul, n.Min, n.Max,
                n.Select)
TRIALS = 6
#: Input arrays up to this many elements are shown in the counterexample's values.
SHOWN_INPUT = 64
#: A second start value for T.alloc_buffer memory (the executor's default is 0).
_OTHER_FILL = 7


def refute_by_execution(original: n.PrimFunc, rewritten: n.PrimFunc, what: str
                        ) -> Counterexample | None:
    """An element that ``rewritten`` leaves with another value than ``original`` does,
    on inputs that honour the assumptions; ``None`` when none is found or the run would
    not be exact (see the module docstring).  ``what`` names the rewrite in the
    description."""
    if not (_runnable(original) and _runnable(rewritten)):
        return None
    # The reference executor, a layer above: imported here, where it is needed.  It is
    # run without codegen.build's bounds proof; it checks every access as it runs.
    from codegen.interpreter import run
    from codegen.lower import lower

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
        runs = {}
        try:
            for name, program, fill in (("want", before, 0), ("want again", before, _OTHER_FILL),
                                        ("got", after, 0), ("got again", after, _OTHER_FILL)):
                if fill != 0 and not _allocates(program):
                    runs[name] = runs[name.split()[0]]  # no memory it may read unwritten
                    continue
                runs[name] = _copy(args)
                run(program, *runs[name], alloc_fill=fill)
        except AssumptionError:
            continue  # the draw broke an assumption: not a valid input
        except (PolypadError, ArithmeticError):
            return None
        if not all(np.array_equal(a, b) for a, b in zip(runs["want"], runs["want again"],
                                                        strict=True)):
            # The function reads memory it never wrote: its result is not one value,
            # and a rewrite may legitimately pick another.
            return None
        for got in (runs["got"], runs["got again"]):  # the same list when nothing allocates
            found = _difference(original, args, runs["want"], got, what)
            if found is not None:
                return found
    return None


def _runnable(f: n.PrimFunc) -> bool:
    """No ``T.undef()``, only exact float operations, and small buffers."""
    total = 0
    buffers = [p for p in f.params if isinstance(p, n.Buffer)]
    buffers += [x.buffer for x in walk(f.body) if isinstance(x, n.Allocate)]
    for buffer in buffers:
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
        if isinstance(node, n.Expr) and not isinstance(node, _EXACT_FLOAT) and \
                dtypes.is_float(getattr(node, "dtype", "")):
            return False  # a division or a cast may round
    return True


def _allocates(f: n.PrimFunc) -> bool:
    return any(isinstance(x, n.Allocate) for x in walk(f.body))


def _copy(args: list) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _difference(f: n.PrimFunc, args: list, want: list, got: list, what: str
                ) -> Counterexample | None:
    params = {p.name: int(a) for p, a in zip(f.params, args, strict=True)
              if isinstance(p, n.Var)}
    for param, a, b in zip(f.params, want, got, strict=True):
        if not isinstance(param, n.Buffer):
            continue
        if dtypes.is_float(param.dtype) and (np.max(np.abs(a), initial=0) >= EXACT_LIMIT
                                             or np.max(np.abs(b), initial=0) >= EXACT_LIMIT):
            return None  # large values may have rounded
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
