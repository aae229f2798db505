"""No-op rule 3: a store that writes the value already there.

``stores_existing_value(f, store)`` decides whether, at every instance of
``store``, the value it writes equals the content of the element it writes
to, just before it runs.  Two ways to know the content:

* the value *is* that element, read back unchanged (``A[i] = A[i]``, the
  read-then-write-back that RFC 0077 lists among RemoveNoOp's rules);
* the context at the store knows it: an assumption (``T.assume(B[0] == 0.0)``
  before ``B[0] = 0.0``), a value stored earlier and not overwritten since,
  or a condition on data, all through :func:`analyses.prove`.  An update
  ``B[i] = B[i] + d`` is first asked whether ``d`` is 0 there, a question
  that needs no fact about ``B[i]`` (the RFC's sums over padding).

A store of ``T.undef()`` writes an arbitrary value, not the one already
there; that such a store may be dropped is a separate rule (lowering
removes it, see docs/semantics.md), decided by the no-op analysis itself.

The same question, asked of a store while an element holds a known
constant, tells which writes *keep* a stored constant
(:mod:`.kept_constants`): ``B[i] = B[i] + A[i - f] * F[f]`` stores back
the 0 it reads wherever ``A[i - f]`` is 0, so a ``B[i] = 0`` stored before
still holds after it there -- TVM's "partially proven buffer values".

>>> stores_existing_value(f, store)    # Proved('z3') for the RFC's sum example
"""

from __future__ import annotations

from polypad.errors import PolypadError
from polypad.ir import dtypes
from polypad.ir import nodes as n
from polypad.ir.show import show

from .context import context_at
from .evidence import Decision, Proved
from .kept_constants import prove_kept_constants_last
from .proof_options import DEFAULT, ProofOptions
from .prover import DEFAULT_TIMEOUT_MS, prove_same_value


def stores_existing_value(f: n.PrimFunc, store: n.BufferStore, *, strict_ieee: bool = False,
                          timeout_ms: int = DEFAULT_TIMEOUT_MS,
                          zero_change_tried: bool = False,
                          options: ProofOptions | None = None) -> Decision:
    """Whether every instance of ``store`` writes the value its element already holds.

    Returns ``Proved``, ``Refuted`` with the instance, element, the value
    there and the value stored, or ``Unknown``.  With ``strict_ieee`` floats
    are IEEE values and "the same" is bit-level: storing ``B[0] + 0.0`` over
    ``-0.0`` changes memory.  ``zero_change_tried`` skips the first attempt for
    an update (:func:`adds_zero`) when the caller has made it already.
    ``options`` are the prover's (:class:`~analyses.proof_options.ProofOptions`),
    passed on by a caller that asks on behalf of another.

    >>> stores_existing_value(f, f.body.stmts[1])   # B[0] = 0.0 after T.assume(B[0] == 0.0)
    """
    if not isinstance(store, n.BufferStore):
        raise PolypadError(
            f"stores_existing_value needs a BufferStore, not {type(store).__name__} "
            f"({show(store).strip().splitlines()[0] if show(store).strip() else ''})")
    current = n.BufferLoad(store.buffer, store.indices)
    if store.value == current:
        return Proved("read-back", f"{show(store).strip()} writes back what it reads")
    ctx = context_at(f, store)
    options = ProofOptions.of(strict_ieee, options)

    def decide(asked: ProofOptions) -> Decision:
        return prove_same_value(store.value, current, ctx, timeout_ms=timeout_ms,
                                options=asked)

    if options.floats.bit_precise or _change(store.value, current) is None:
        return prove_kept_constants_last(ctx, options, decide)
    # An update B[i] = B[i] + d: adds_zero is the attempt without kept constants (d == 0
    # is B[i] + d == B[i]), made here unless the caller made it.
    first = None if zero_change_tried else adds_zero(f, store, timeout_ms=timeout_ms)
    return first if first is not None else decide(options)


def adds_zero(f: n.PrimFunc, store: n.BufferStore, *,
              timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Proved | None:
    """``Proved`` when ``store`` is an update ``B[i] = B[i] + d`` (or ``d + B[i]``,
    ``B[i] - d``) whose ``d`` is 0 wherever it runs; ``None`` when it is no such
    update or that is not proved (which refutes nothing).

    ``B[i] + d`` is ``B[i]`` exactly where ``d`` is 0 (reals, and integers that
    wrap: x + 0 is x; not bit for bit in IEEE, where -0.0 + 0.0 is 0.0, so
    callers under ``strict_ieee`` do not ask).  The question reads no ``B[i]``,
    whose facts are often the dearest, so it is asked first, without kept
    constants (see ``prove_kept_constants_last``).
    """
    current = n.BufferLoad(store.buffer, store.indices)
    change = _change(store.value, current)
    if change is None:
        return None
    zero = n.FloatImm(0.0, change.dtype) if dtypes.is_float(change.dtype) else \
        n.IntImm(0, change.dtype)
    ctx = context_at(f, store)
    first = prove_same_value(change, zero, ctx, timeout_ms=timeout_ms,
                             options=DEFAULT.without_kept_constants())
    return first if isinstance(first, Proved) else None


def _change(value: n.Expr, current: n.BufferLoad) -> n.Expr | None:
    """``d`` when ``value`` is ``current + d``, ``d + current`` or ``current - d``
    (integers or floats); else ``None``."""
    if not (dtypes.is_int(value.dtype) or dtypes.is_float(value.dtype)):
        return None
    match value:
        case n.Add(a=a, b=b) if a == current and b.dtype == value.dtype:
            return b
        case n.Add(a=a, b=b) if b == current and a.dtype == value.dtype:
            return a
        case n.Sub(a=a, b=b) if a == current and b.dtype == value.dtype:
            return b
    return None


