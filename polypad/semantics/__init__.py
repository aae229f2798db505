"""What a program means when it runs: lowering and the reference executor.

A scheduled function runs *lowered* (:mod:`.lowering`): assumptions removed
or kept as checks, stores of ``T.undef()`` removed, views flattened, vectors
written out lane by lane.  The reference executor (:mod:`.interpreter`)
walks the lowered IR over numpy scalars of each node's dtype
(:mod:`.values`), checking every access, every kept assumption and every
loop range (:mod:`.loop_ranges`) as it goes.

It sits below the analyses, which prove by running
(``analyses.execution_refutation``), and below every code-generation target,
each of which is tested against it.  It imports the IR, the model's integer
ranges and the support modules only.

>>> lowered = lower(f, check_assumptions=True)
>>> run(lowered, a, b)            # arrays updated in place
"""

from . import interpreter
from .interpreter import run
from .lowering import CHECKED_PIPELINE, PIPELINE, lower

__all__ = ["CHECKED_PIPELINE", "PIPELINE", "interpreter", "lower", "run"]
