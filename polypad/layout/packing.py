"""Moving data between the logical and the transformed layout, with numpy.

``pack`` scatters a logical array into an array of the transformed shape and
fills the padding; ``unpack`` gathers it back.  The map's index expressions
are evaluated once, vectorised over the whole logical index grid (numpy's
``//`` and ``%`` are floor operations, like the IR's).
"""

from __future__ import annotations

import numpy as np

from polypad.errors import PolypadError
from polypad.ir import nodes as n

_BINARY = {
    n.Add: np.add, n.Sub: np.subtract, n.Mul: np.multiply, n.FloorDiv: np.floor_divide,
    n.FloorMod: np.mod, n.Min: np.minimum, n.Max: np.maximum, n.Eq: np.equal,
    n.Ne: np.not_equal, n.Lt: np.less, n.Le: np.less_equal, n.Gt: np.greater,
    n.Ge: np.greater_equal, n.And: np.logical_and, n.Or: np.logical_or,
}


def evaluate_index(expr: n.Expr, env: dict) -> np.ndarray:
    """An integer index expression evaluated elementwise over numpy arrays."""
    if isinstance(expr, n.Var):
        return env[expr]
    if isinstance(expr, (n.IntImm, n.BoolImm)):
        return np.int64(expr.value)
    if type(expr) in _BINARY:
        return _BINARY[type(expr)](evaluate_index(expr.a, env), evaluate_index(expr.b, env))
    if isinstance(expr, n.Not):
        return np.logical_not(evaluate_index(expr.a, env))
    if isinstance(expr, n.Select):
        return np.where(evaluate_index(expr.condition, env),
                        evaluate_index(expr.true_value, env),
                        evaluate_index(expr.false_value, env))
    raise PolypadError(f"cannot evaluate {type(expr).__name__} in an index map")


def _transformed_positions(index_map, shape):
    inputs, outputs, _ = index_map.trace(len(shape))
    grid = np.indices(shape, dtype=np.int64)
    env = dict(zip(inputs, grid))
    return tuple(np.broadcast_to(evaluate_index(o, env), shape) for o in outputs)


def pack(index_map, array: np.ndarray, pad_value=None) -> np.ndarray:
    """``array`` (logical layout) as a new array in the transformed layout.

    ``pad_value`` fills the padding: a number, or a callable of the
    transformed indices returning a number.  ``None`` fills floats with NaN
    and integers with 0, so that a kernel that reads padding it should not
    shows it in a float result.
    """
    array = np.asarray(array)
    shape = array.shape
    rel = index_map.relation(shape)
    rel.check_injective()
    out_shape = rel.transformed_shape()
    if pad_value is None:
        pad_value = np.nan if np.issubdtype(array.dtype, np.floating) else 0
    if callable(pad_value):
        out = np.empty(out_shape, dtype=array.dtype)
        grid = np.indices(out_shape)
        values = np.vectorize(lambda *idx: _number(pad_value(*idx)))(*grid)
        out[...] = values
    else:
        out = np.full(out_shape, pad_value, dtype=array.dtype)
    out[_transformed_positions(index_map, shape)] = array
    return out


def unpack(index_map, array: np.ndarray, shape) -> np.ndarray:
    """The logical array of ``shape`` held by ``array`` in the transformed layout."""
    array = np.asarray(array)
    return array[_transformed_positions(index_map, tuple(shape))].copy()


def _number(value):
    if isinstance(value, (n.IntImm, n.FloatImm, n.BoolImm)):
        return value.value
    if isinstance(value, n.Expr):
        raise PolypadError("pack() takes a pad value that is a number or a callable "
                           "returning a number")
    return value
