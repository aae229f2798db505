"""The dataflow answers of the functions asked about most recently, and which answers
serve a question: the whole function's serve every narrower one (a few buffers, a few
elements, the statements under a loop), computed once per function and question."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import islpy as isl

from polypad.concurrency import Recent
from polypad.ir import nodes as n
from polypad.ir.views import root
from polypad.model import Model

# The flows of the functions asked about most recently, keyed by identity:
# ``extract`` is a function of the PrimFunc alone, so a new model of the same
# function has the same statement, buffer and parameter names.  Threads asking
# about one function share its flows, whose parts are computed on first use.
_FLOWS = Recent(8)
# The functions asked a question about a few elements, by their whole key.
_ABOUT = Recent(8)


def flows_of(model: Model, buffers: Iterable[n.Buffer] | None, about: isl.UnionSet | None,
             inside: n.For | None, make: Callable):
    """The flows of ``model`` for a question about ``buffers``, ``about`` and ``inside``
    (as :class:`analyses.dataflow.Dependences` takes them): remembered ones that answer
    it, or ``make(model, buffer ids, about, inside)``, remembered."""
    # Buffer objects are identities, held alive by the function the key checks;
    # element sets are keyed by their text (names as in the model of that function).
    # By the memory's owner: the model's accesses name it, never a view of it.
    ids = None if buffers is None else frozenset(id(root(b)) for b in buffers)
    owners = (model.func,)
    # A loop by identity too, held alive by the function.
    whole = (ids, None, None)
    key = (ids, None if about is None else str(about), None if inside is None else id(inside))
    for k in (whole, key):  # the whole flows answer every narrower question too
        found = _FLOWS.get(owners, k)
        if found is not None:
            return found
    if about is not None:
        # One question about a few elements is cheaper than the whole; a second
        # about the same function (a pass asking about each statement) gets the
        # whole, computed once.
        if _ABOUT.get(owners, whole) is not None:
            key, about, inside = whole, None, None
        else:
            _ABOUT.put(owners, True, whole)
    return _FLOWS.put(owners, make(model, ids, about, inside), key)


__all__ = ["flows_of"]
