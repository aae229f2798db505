"""How a question is put to the prover: one value, passed down explicitly.

A decider that asks the prover on behalf of a caller passes these on, so
that what the caller will do with the answer steers the work below it --
never state set around a call and read somewhere deeper.

>>> ProofOptions()                               # reals, counterexamples sought
>>> ProofOptions(floats=STRICT_IEEE).proofs_only()
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from polypad.model.float_semantics import REALS, STRICT_IEEE, FloatSemantics, float_semantics


@dataclass(frozen=True)
class ProofOptions:
    """What a prover question may assume and what its caller needs back.

    * ``floats``: what floats mean (:data:`~polypad.model.REALS`, the default,
      or :data:`~polypad.model.STRICT_IEEE`);
    * ``counterexamples``: False when the caller acts only on ``Proved`` (a
      first attempt with fewer facts, a lemma): a question Z3 does not prove
      is then ``Unknown``, and the counterexample search -- which checks each
      model against the history of every element it reads -- is skipped, as
      are refutations by running the program;
    * ``earlier_instances``: False when the caller has a cheaper way to refute
      (a run): a counterexample that needs an untracked value is not sought
      again at earlier instances;
    * ``kept_constants``: False inside the proof that a write keeps a stored
      constant (:mod:`analyses.kept_constants`): that proof uses no kept
      constants itself, which bounds the work.
    """

    floats: FloatSemantics = REALS
    counterexamples: bool = True
    earlier_instances: bool = True
    kept_constants: bool = True

    @classmethod
    def of(cls, strict_ieee: bool, options: ProofOptions | None = None) -> ProofOptions:
        """The options a public entry's ``strict_ieee=`` and ``options=`` keywords ask
        for together: ``options`` (the default unless given), with IEEE floats where
        ``strict_ieee`` says so."""
        if options is None:
            return cls(floats=float_semantics(strict_ieee))
        return dataclasses.replace(options, floats=STRICT_IEEE) if strict_ieee else options

    def proofs_only(self) -> ProofOptions:
        """These options for a caller that uses only a ``Proved`` answer."""
        return dataclasses.replace(self, counterexamples=False)

    def first_counterexample_only(self) -> ProofOptions:
        """These options for a caller that refutes by a run when the first
        counterexample needs a value the prover does not track."""
        return dataclasses.replace(self, earlier_instances=False)

    def without_kept_constants(self) -> ProofOptions:
        """These options for a proof that uses no kept constant and seeks no
        counterexample (a first attempt, or a write proven to keep a constant)."""
        return dataclasses.replace(self, counterexamples=False, kept_constants=False)


#: The prover's default: reals, counterexamples, every fact.
DEFAULT = ProofOptions()
