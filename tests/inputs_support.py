"""Random arguments that honour a function's ``T.assume`` facts: the library's
:func:`analyses.witness_inputs.make_inputs`, which the execution refuter uses too.

>>> args = make_inputs(f, np.random.default_rng(0))
"""

from analyses.witness_inputs import make_inputs

__all__ = ["make_inputs"]
