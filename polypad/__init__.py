"""polypad: exact polyhedral and constraint analysis for padded layouts.

One import gives the public names::

    import polypad as pp
    from polypad import T

    f = pp.parse(text)            # never runs the text
    print(pp.script(f))
    sch = pp.Schedule(f)          # primitives with a replayable trace
"""

# model: importing it hands the parser the checks it runs through the model
# (polypad/script/checks.py), so every parse has them.
from polypad import (
    errors,
    ir,
    model,  # noqa: F401
    script,  # callable: pp.script(f) prints f
)
from polypad._version import __version__ as __version__
from polypad.budget import default_budget, set_default_budget
from polypad.errors import (
    BudgetExceeded,
    IllegalTransformError,
    NonInjectiveError,
    NotAffineError,
    NotFoundError,
    ParseError,
    PolypadError,
    VerifyError,
)
from polypad.ir.structural import assert_structural_equal, structural_equal
from polypad.ir.verify import verify
from polypad.layout import AXIS_SEPARATOR, IndexMap
from polypad.script import T, ir_module, parse, prim_func

__all__ = [
    "T", "IndexMap", "AXIS_SEPARATOR", "Schedule", "parse", "script", "prim_func", "ir_module",
    "structural_equal", "assert_structural_equal", "verify", "transform", "errors", "ir",
    "PolypadError", "ParseError", "VerifyError", "NotAffineError", "NonInjectiveError",
    "IllegalTransformError", "NotFoundError", "BudgetExceeded", "default_budget",
    "set_default_budget", "autoschedule",
]

# The layers above the analyses load on first use: every module of ``analyses``
# imports ``polypad``'s lower layers, which runs this file first, so importing them
# here would circle back into an ``analyses`` module still loading (``import
# analyses.combiners`` in a fresh process).
_ON_USE = ("Schedule", "autoschedule", "transform")


def __getattr__(name: str):
    if name == "Schedule":
        from polypad.schedule import Schedule as value
    elif name == "autoschedule":
        from polypad.tuner import autoschedule as value
    elif name == "transform":
        import polypad.transform as value
    else:
        raise AttributeError(f"module 'polypad' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ON_USE))
