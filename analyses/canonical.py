"""The function the value analyses answer about, and their evidence in the user's names.

``is_no_op`` and ``can_remove_conditional`` reason about values: facts about
buffers, statement by statement.  A function that TVM's lowering printed
holds what they cannot state facts about -- a packed function's
scaffolding, views, vector statements -- so they are asked about its
:func:`canonical_form`, which means the same on every execution that
reaches the computation:

1. a packed function's computation without its scaffolding
   (:mod:`.canonical_packed`: asserts become assumptions, the tensors the
   arguments point to become buffer parameters);
2. views and vectors written out (:mod:`.canonical_views`: every access of
   the memory's owner, every lane a statement of its own);
3. where the model would refuse a let whose value a store of its body
   changes, each let moved down to the statements that read it
   (:mod:`.scoped_lets`).

A statement of the original is found in the canonical form by what it
became; the answer is then given back in the original's terms
(:meth:`CanonicalForm.map_back`): statements named as the original names
them, and a counterexample that needs a value polypad does not know (an
opaque intrinsic's) or might break a check it could not read is not
claimed.  Elements are named in the buffer that owns the memory (a view's
``A_1[17]`` is ``A[1, 5]`` of the parameter ``A``).
"""

from __future__ import annotations

import dataclasses
import re

from polypad.concurrency import Recent
from polypad.ir import nodes as n
from polypad.ir.opaque import OpaqueSite, first_alias_or_vector, first_opaque
from polypad.ir.show import show
from polypad.ir.views import is_view, root
from polypad.ir.visitor import walk
from polypad.model.nest import collect, is_leaf

from .canonical_packed import Unpacked, unpack
from .canonical_views import Written, write_out_views_and_lanes
from .evidence import Decision, Instance, Proved, Refuted, Unknown
from .program import _label
from .scoped_lets import Scoped, scope_lets


@dataclasses.dataclass
class CanonicalForm:
    """A function (``original``) and the one its value questions are asked of (``func``).

    ``unpacked`` is the intermediate function, after step 1 and before step 2
    (views still there): for the bounds of an access through a view, which a
    view may make narrower than its memory.
    """

    original: n.PrimFunc
    unpacked: n.PrimFunc
    func: n.PrimFunc
    packed: Unpacked | None
    written: Written
    scoped: Scoped | None = None
    _labels: dict[str, str] | None = None
    _inside: set[int] | None = None

    def unpacked_stmt(self, stmt: n.Stmt) -> n.Stmt | None:
        """What ``stmt`` (of the original) became after step 1 (None: left out)."""
        if self.packed is None:
            return stmt
        found = self.packed.made.get(id(stmt))
        return None if found is None or found[0] is not stmt else found[1]

    def stmt(self, stmt: n.Stmt) -> n.Stmt | None:
        """What ``stmt`` (of the original) became in the canonical form (None: left out)."""
        inner = self.unpacked_stmt(stmt)
        if inner is None:
            return None
        for rewrite in (self.written, self.scoped):
            if rewrite is None:
                continue
            found = rewrite.made.get(id(inner))
            if found is None or found[0] is not inner:
                return None
            inner = found[1]
        if self._inside is None:
            self._inside = {id(x) for x in walk(self.func.body) if isinstance(x, n.Stmt)}
        # A sequence that a let's scope split is in the canonical form no more.
        return inner if id(inner) in self._inside else None

    @property
    def narrow_views(self) -> bool:
        """Whether a view covers less than its memory (an offset, or fewer elements):
        then an access inside the memory may still leave the view."""
        for x in walk(self.unpacked.body):
            if isinstance(x, n.DeclBuffer) and is_view(x.buffer):
                offset = x.buffer.elem_offset
                if offset is not None and offset != n.IntImm(0, offset.dtype):
                    return True
                if _size(x.buffer) is None or _size(x.buffer) != _size(root(x.buffer)):
                    return True
        return False

    # ------------------------------------------------------------ evidence

    def map_back(self, decision: Decision) -> Decision:
        """``decision`` (about the canonical form) in the original's terms."""
        if isinstance(decision, Unknown):
            return dataclasses.replace(decision, reason=self.relabel(decision.reason))
        if isinstance(decision, Proved):
            if getattr(decision, "replacement", None) is not None:
                return Unknown("removable once its indices are wrapped, which is decided on the "
                               "function with its views and vectors written out and is not "
                               f"mapped back to it: {self.relabel(str(decision))}")
            return dataclasses.replace(decision, detail=self.relabel(decision.detail))
        cex = decision.counterexample
        text = self.relabel(str(cex))
        if self.packed is not None:
            for var, site in self.packed.opaque.items():
                if var.name in cex.params or var.name in cex.values:
                    return Unknown(f"not claimed: the counterexample ({text}) needs the value "
                                   f"of {site}")
            if self.packed.entangled:
                site = self.packed.entangled[0]
                return Unknown(f"not claimed: the counterexample ({text}) may not pass the "
                               f"check {site}")
        description = self.relabel(cex.description)
        if cex.element is not None and self.views_of(cex.element.buffer):
            views = ", ".join(self.views_of(cex.element.buffer))
            description += (f" (elements are named in {cex.element.buffer}, whose memory the "
                            f"view {views} shares)")
        return Refuted(dataclasses.replace(
            cex, description=description,
            values={self.relabel(k): v for k, v in cex.values.items()},
            instances=tuple(Instance(self.labels().get(i.statement, i.statement), i.indices)
                            for i in cex.instances)))

    def labels(self) -> dict[str, str]:
        """Statement names in the canonical form -> the original's: each statement as
        printed (what a prover's counterexample names it by).  The model's names
        (``S3``) count the statements of the function a decider builds, not of the
        original, and are left as they are."""
        if self._labels is None:
            self._labels = self._make_labels()
        return self._labels

    def _make_labels(self) -> dict[str, str]:
        seen: dict[str, set[str]] = {}
        for node in walk(self.original.body):
            if not (is_leaf(node) or isinstance(node, n.Assert)):
                continue
            made = self.stmt(node)
            if made is None:
                continue
            pairs = [(_label(x), _label(node)) for x in walk(made) if is_leaf(x)]
            if isinstance(node, n.BufferStore) and isinstance(made, n.BufferStore):
                # A scalar store keeps its shape: its loads pair up with the original's.
                loads = [(n.BufferLoad(made.buffer, made.indices),
                          n.BufferLoad(node.buffer, node.indices))]
                loads += zip(_loads(made.value), _loads(node.value))
                pairs += [(show(a), show(b)) for a, b in loads]
            for ours, theirs in pairs:
                seen.setdefault(ours, set()).add(theirs)
        # A text two originals print alike in the canonical form names neither.
        return {ours: theirs.pop() for ours, theirs in seen.items()
                if len(theirs) == 1 and ours not in theirs}

    def views_of(self, name: str) -> list[str]:
        """The views of the original that share the memory of buffer ``name``."""
        return sorted({x.buffer.name for x in walk(self.unpacked.body)
                       if isinstance(x, n.DeclBuffer) and is_view(x.buffer)
                       and root(x.buffer).name == name})

    def relabel(self, text: str) -> str:
        """``text`` with the canonical form's statement names replaced by the original's."""
        labels = self.labels()
        if not labels or not text:
            return text
        words = sorted(labels, key=len, reverse=True)
        pattern = "|".join(rf"(?<![\w@]){re.escape(w)}(?![\w\[])" if w.isidentifier()
                           else re.escape(w) for w in words)
        return re.sub(pattern, lambda m: labels[m.group(0)], text)


def _loads(e: n.Expr) -> list[n.BufferLoad]:
    return [x for x in walk(e) if isinstance(x, n.BufferLoad)]


def _size(buffer: n.Buffer) -> int | None:
    out = 1
    for d in buffer.shape:
        if not isinstance(d, int):
            return None
        out *= d
    return out


_FORMS = Recent(16)


#: Said of a function that is its own canonical form.
_ITSELF = "itself"


def canonical_form(f: n.PrimFunc) -> CanonicalForm | OpaqueSite | None:
    """The canonical form of ``f`` (see the module docstring); ``None`` when ``f`` is
    its own (no scaffolding, views, vectors or lets read again), or the construct that
    keeps it from having one.  Made once per function object."""
    found = _FORMS.get((f,))
    if found is not None:
        return None if found is _ITSELF else found
    # A plain assert is the model's own statement (a check that may raise), kept as is.
    if first_opaque(f, checks_as_facts=True) is None and first_alias_or_vector(f) is None \
            and not _rereads(f):
        _FORMS.put((f,), _ITSELF)
        return None
    packed = None
    unpacked = f
    if first_opaque(f, checks_as_facts=True) is not None:
        packed = unpack(f)
        if isinstance(packed, OpaqueSite):
            return packed
        unpacked = packed.func
    func, written = write_out_views_and_lanes(unpacked)
    left = first_opaque(func, checks_as_facts=True) or first_alias_or_vector(func)
    if left is not None:
        return left
    scoped = None
    if _rereads(func):
        func, scoped = scope_lets(func)
    if func is f:  # nothing to write out (a let read again that no scope can narrow)
        _FORMS.put((f,), _ITSELF)
        return None
    return _FORMS.put((f,), CanonicalForm(f, unpacked, func, packed, written, scoped))


def _rereads(f: n.PrimFunc) -> bool:
    """Whether the model would refuse a let or condition of ``f`` as read again after a
    store of its body changed it (:func:`polypad.model.nest.collect`)."""
    reread: list = []
    collect(f.body, reread)
    return any(isinstance(stmt, n.LetStmt) for stmt, _, _ in reread)


def unmodelled(f: n.PrimFunc, form: CanonicalForm | OpaqueSite, stmt: n.Stmt) -> Unknown:
    """The answer about a statement the canonical form does not hold, or about a
    function that has none: naming what polypad cannot model."""
    if isinstance(form, OpaqueSite):
        return Unknown(f"{f.name!r} cannot be modelled: {form}")
    inside = first_opaque(n.PrimFunc(f.name, (), stmt))
    what = str(inside) if inside is not None else "it is a check polypad does not evaluate"
    return Unknown(f"the statement is part of a packed function's scaffolding, which the "
                   f"value analyses do not model: {what}")
