"""A primitive whose legality ISL fails to decide is refused with an ``Unknown``.

ISL's coalescing fails its own consistency check ("original tableau does not
correspond to original basic map") on a union of two domains with integer
divisions that the dataflow of this nest builds while ``reorder`` checks the
new order (fuzzer seed 20001, case 26, minimised).  ISL's error used to rise
out of ``sch.reorder`` as an ``islpy.Error``: no refusal a caller can catch,
and no evidence.  The legality is unknown, so the primitive is refused, as
one whose legality does not settle in time is: an
:class:`~polypad.errors.IllegalTransformError` whose evidence is the
``Unknown`` naming ISL's failure, with the schedule left as it was.

Should a later ISL decide this nest, the reorder is decided instead (taken
or refused with a counterexample) and this test says so: find another
program ISL fails on, or drop it.
"""

from __future__ import annotations

import pytest

from analyses.evidence import Unknown
from polypad.errors import IllegalTransformError
from polypad.ir.structural import structural_equal
from polypad.schedule import Schedule
from polypad.script import parse

NEST = """
@T.prim_func
def func(A: T.Buffer((8,), "int32")):
    for l in T.serial(5):
        for m in T.serial(2):
            A[(l + 4) // 4] = A[(6 * l + 3 * m + 1) % 8]
        A[7] = A[l % 8]
"""


def test_reorder_that_isl_fails_to_check_is_refused_with_an_unknown():
    func = parse(NEST)
    sch = Schedule(func)
    with pytest.raises(IllegalTransformError, match="reorder left the schedule unchanged: "
                       "its legality is unknown, ISL failed") as err:
        sch.reorder("m", "l")
    evidence = err.value.evidence
    assert isinstance(evidence, Unknown)
    assert "isl_union_set_coalesce" in evidence.reason
    assert structural_equal(sch.func, func)
    assert len(sch.trace) == 0
