"""The floating-point flags of a build: ``codegen.build(f, fastmath=...)``.

- ``None`` or ``False``: strict IEEE; every operation rounds as in the
  reference executor, so float results are bitwise the reference's (math
  functions aside, whose libm may differ by an ulp).
- ``"contract"`` (the default): LLVM may fuse ``a * b + c`` into one fused
  multiply-add, which rounds once instead of twice.  Nothing is reordered.
- ``True`` or ``"full"``: Numba's full fast-math (reassociation, reciprocals,
  no NaN or infinity assumed) on the loops the schedule marked
  ``T.vectorized`` -- the only place a schedule asks for its arithmetic to be
  reordered -- and ``"contract"`` on the rest of the kernel.

docs/semantics.md says which results may change and by how much.  Fast-math
flags sit on each LLVM instruction, and Numba sets them per compiled
function, so under ``"full"`` a vectorized loop is compiled in a helper
function of its own (see :mod:`.emit`); under the other modes every function
has the same flags and the loop is emitted in place.
"""

from __future__ import annotations

from polypad.arguments import wrong_type
from polypad.errors import ArgumentValueError, BuildArgumentError

#: The accepted values, each with the mode it names.
MODES = {None: None, False: None, "contract": "contract", True: "full", "full": "full"}
DEFAULT = "contract"
_TAKES = "None, False, 'contract', True or 'full'"


def mode(value, where: str = "codegen.build") -> str | None:
    """``value`` as ``None``, ``"contract"`` or ``"full"``; ArgumentTypeError for a
    value of another type, ArgumentValueError for an unknown string."""
    if not (value is None or isinstance(value, (bool, str))):
        raise wrong_type(value, "fastmath", where, _TAKES, error=BuildArgumentError)
    if value not in MODES:
        raise ArgumentValueError(f"{where}: fastmath must be one of {_TAKES}, not {value!r}")
    return MODES[value]


def flag(fastmath: str | None, vectorized: bool) -> str | None:
    """The ``fastmath=`` argument of ``numba.njit`` for a function compiled under
    mode ``fastmath``, which is a vectorized loop's helper when ``vectorized``;
    ``None`` for none."""
    if fastmath is None:
        return None
    if fastmath == "full" and vectorized:
        return "True"
    return '{"contract"}'


def vector_helpers(fastmath: str | None) -> bool:
    """Whether vectorized loops need helper functions: only when their flags differ
    from the kernel's."""
    return flag(fastmath, True) != flag(fastmath, False)
