"""The model layer: IR as ISL sets and maps, ISL back to IR, and IR as Z3 terms.

* :func:`to_pw_aff` / :func:`to_set` — quasi-affine expressions and
  conditions as ``isl.PwAff`` / ``isl.Set`` over an :class:`AffineSpace`;
* :func:`pw_aff_to_expr` / :func:`set_to_condition` — the way back, with
  floor division kept;
* :func:`extract` — a ``PrimFunc``'s :class:`Model`: statement domains,
  access relations and the schedule (:func:`extract_gathers`: with an index
  that reads memory over-approximated by its buffer's extent);
* :func:`to_z3` / :class:`Z3Env` — expressions as Z3 terms, with floor
  ``//`` and ``%``, buffers as uninterpreted functions, and floats as the
  env's :class:`FloatSemantics` says (:data:`REALS` or :data:`STRICT_IEEE`).

Importing the model hands the parser the checks it runs through this layer
(:mod:`polypad.script.checks`): block axis domains, declared regions, and
the extents of a ``T.match_buffer`` region.
"""

from polypad.ir.naming import Names
from polypad.script import checks as _script_checks

from .affine import AffineSpace, equal_everywhere, to_pw_aff
from .block_axes import check_axes
from .block_regions import check_declared
from .conditions import to_set
from .extract import extract, extract_gathers
from .float_semantics import REALS, STRICT_IEEE, FloatSemantics, float_semantics
from .model import Access, Model, StatementModel
from .to_ir import pw_aff_to_expr, set_to_condition
from .z3conv import Z3Env, to_z3

__all__ = [
    "REALS", "STRICT_IEEE", "Access", "AffineSpace", "FloatSemantics", "Model", "Names",
    "StatementModel", "Z3Env", "extract", "extract_gathers", "float_semantics", "pw_aff_to_expr",
    "set_to_condition", "to_pw_aff", "to_set", "to_z3",
]

_script_checks.register(block_axes=check_axes, declared_regions=check_declared,
                        equal_everywhere=equal_everywhere)
