"""Deciders: pure functions from IR and its model to facts with evidence.

Each decider answers ``Proved``, ``Refuted`` with a counterexample, or
``Unknown`` with a reason, and never rewrites IR.  The first deciders
(touched regions, dependences, the prover, loop-merge legality, no-op
detection) arrive with the analyses issue; until then this package is empty.
"""
