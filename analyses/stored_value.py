"""No-op rule 3: a store that writes the value already there.

``stores_existing_value(f, store)`` decides whether, at every instance of
``store``, the value it writes equals the content of the element it writes
to, just before it runs.  Two ways to know the content:

* the value *is* that element, read back unchanged (``A[i] = A[i]``, the
  read-then-write-back that RFC 0077 lists among RemoveNoOp's rules);
* the context at the store knows it: an assumption (``T.assume(B[0] == 0.0)``
  before ``B[0] = 0.0``), a value stored earlier and not overwritten since,
  or a condition on data, all through :func:`analyses.prove`.

A store of ``T.undef()`` writes an arbitrary value, not the one already
there; that such a store may be dropped is a separate rule (DESIGN.md:
lowering removes it), decided by the no-op analysis itself.

>>> stores_existing_value(f, store)    # Proved('z3') for the RFC's sum example
"""

from __future__ import annotations

from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.show import show

from .context import context_at
from .evidence import Decision, Proved
from .prover import DEFAULT_TIMEOUT_MS, prove_same_value


def stores_existing_value(f: n.PrimFunc, store: n.BufferStore, *, strict_ieee: bool = False,
                          timeout_ms: int = DEFAULT_TIMEOUT_MS) -> Decision:
    """Whether every instance of ``store`` writes the value its element already holds.

    Returns ``Proved``, ``Refuted`` with the instance, element, the value
    there and the value stored, or ``Unknown``.  With ``strict_ieee`` floats
    are IEEE values and "the same" is bit-level: storing ``B[0] + 0.0`` over
    ``-0.0`` changes memory.

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
    return prove_same_value(store.value, current, ctx, strict_ieee=strict_ieee,
                            timeout_ms=timeout_ms)
