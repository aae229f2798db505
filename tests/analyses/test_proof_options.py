"""ProofOptions: how a question is put to the prover, passed down explicitly.

The same questions with different options give the answers each option promises:
IEEE floats refute what the reals prove, a caller that wants proofs only gets no
counterexample (and no work spent on one), and the public ``strict_ieee=`` keyword
is the options with IEEE floats.  No module of ``analyses`` keeps state that
steers the prover: there are no context variables left to set around a call."""

from __future__ import annotations

import ast
from pathlib import Path

import analyses
import polypad as pp
from analyses import Proved, Refuted, Unknown, prove
from analyses.proof_options import DEFAULT, ProofOptions
from polypad.ir import nodes as n
from polypad.ir.visitor import walk
from polypad.model import REALS, STRICT_IEEE

X = n.Var("x", "float32")
ZERO = n.FloatImm(0.0)
CLAIM = (X * ZERO).equal(ZERO)  # true over the reals, false at x = inf

# Over the reals A[i] * 0.0 is the else branch's 0.0; in IEEE it is NaN at A[i] = inf.
TIMES_ZERO = '''
@T.prim_func
def scale(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        if i < 14:
            B[i] = A[i] * 0.0
        else:
            B[i] = 0.0
'''


def test_the_keyword_and_the_options_are_one_question():
    assert ProofOptions.of(False) == DEFAULT and DEFAULT.floats is REALS
    assert ProofOptions.of(True).floats is STRICT_IEEE
    quiet = ProofOptions().proofs_only()
    assert ProofOptions.of(True, quiet) == ProofOptions(floats=STRICT_IEEE,
                                                        counterexamples=False)
    assert ProofOptions.of(False, quiet) is quiet
    lemma = DEFAULT.without_kept_constants()
    assert not lemma.counterexamples and not lemma.kept_constants


def test_ieee_floats_refute_what_the_reals_prove():
    assert prove(CLAIM, options=ProofOptions()) == Proved("z3")
    by_options = prove(CLAIM, options=ProofOptions(floats=STRICT_IEEE))
    by_keyword = prove(CLAIM, strict_ieee=True)
    assert isinstance(by_options, Refuted)
    assert by_options.counterexample.values == by_keyword.counterexample.values


def test_proofs_only_gives_no_counterexample():
    quiet = ProofOptions(floats=STRICT_IEEE).proofs_only()
    decided = prove(CLAIM, options=quiet)
    assert isinstance(decided, Unknown)
    assert decided.reason == "not proved (no counterexample sought)"
    # A proof is a proof either way.
    assert prove(CLAIM, options=ProofOptions().proofs_only()) == Proved("z3")


def test_a_decider_passes_the_options_down():
    f = pp.parse(TIMES_ZERO)
    stmt = next(x for x in walk(f.body) if isinstance(x, n.IfThenElse))
    assert isinstance(analyses.can_remove_conditional(f, stmt), Proved)
    strict = ProofOptions(floats=STRICT_IEEE)
    assert isinstance(analyses.can_remove_conditional(f, stmt, options=strict), Refuted)
    # Asked for proofs only, the same question reaches the prover that way: no refutation.
    quiet = analyses.can_remove_conditional(f, stmt, options=strict.proofs_only())
    assert isinstance(quiet, Unknown)


def test_no_context_variable_steers_an_analysis():
    root = Path(analyses.__file__).parent
    found = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.name}: {name}" for name in names if name == "contextvars"]
    assert not found
