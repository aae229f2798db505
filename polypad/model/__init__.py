"""The model layer: IR as ISL sets and maps, ISL back to IR, and IR as Z3 terms.

* :func:`to_pw_aff` / :func:`to_set` — quasi-affine expressions and
  conditions as ``isl.PwAff`` / ``isl.Set`` over an :class:`AffineSpace`;
* :func:`pw_aff_to_expr` / :func:`set_to_condition` — the way back, with
  floor division kept;
* :func:`extract` — a ``PrimFunc``'s :class:`Model`: statement domains,
  access relations and the schedule;
* :func:`to_z3` / :class:`Z3Env` — expressions as Z3 terms, with floor
  ``//`` and ``%``, buffers as uninterpreted functions.
"""

from polypad.ir.naming import Names

from .affine import AffineSpace, to_pw_aff
from .conditions import to_set
from .extract import extract
from .model import Access, Model, StatementModel
from .to_ir import pw_aff_to_expr, set_to_condition
from .z3conv import Z3Env, to_z3

__all__ = [
    "Access", "AffineSpace", "Model", "Names", "StatementModel", "Z3Env", "extract",
    "pw_aff_to_expr", "set_to_condition", "to_pw_aff", "to_set", "to_z3",
]
