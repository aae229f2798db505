"""Issue 21's reproducer for ``remove_no_op``, shared by the decider's tests
(tests/analyses/test_no_op_structural.py) and the pass's
(tests/transform/test_remove_no_op.py)."""

import numpy as np

#: isl's ``compute_flow`` lost the read of ``A[2]`` by the last store of ``l = 1``,
#: so the whole if/else was "proved" a no-op.
ISSUE_21_IF_ELSE = """
@T.prim_func
def f(A: T.Buffer((6,), "int32")):
    for l in T.serial(6):
        for m in T.serial(2):
            A[(2 * m + l) % 6] = A[(l + m) % 6]
            if l % 3 < 1:
                A[(2 - m) // 4] = 0
            else:
                A[m + 1] = A[(m - l) % 6]
        A[(l + 2) // 2] = 0
        A[((l + 1) % 4) // 2] = l - (1 + A[(5 - l) // 2])
"""


def issue_21_input() -> list[np.ndarray]:
    """The issue's input: the original ends with ``A[2] = 1``, the wrong rewrite with 0."""
    return [np.array([4, 1, -3, 2, -1, -1], "int32")]
