"""``IndexMap``: a layout transformation from logical to transformed indices.

An index map is a quasi-affine function, written as a Python callable (or its
text), from the N logical indices of a buffer to its transformed indices::

    IndexMap(lambda i: [i // 4, i % 4])
    IndexMap(lambda n, h, w, c: [n, h, w, c // 4, AXIS_SEPARATOR, c % 4])
    IndexMap(lambda *idx: [*idx[:-1], idx[-1] // 8, idx[-1] % 8])
    IndexMap("lambda i: [(i + 2) // 8, (i + 2) % 8]")

Every question about a map *on a shape* (its transformed shape, padding,
inverse, injectivity) is answered exactly by isl in
:mod:`polypad.layout.relation`; nothing is enumerated, so the cost does not
grow with the extents, and shapes may hold scalar parameters.  Where ISL fails
inside one (or stops at its operation limit under a caller's budget), the
question raises :class:`~polypad.errors.IslFailure` naming it (or
:class:`~polypad.errors.BudgetExceeded`), never islpy's error
(:mod:`polypad.isl_failure`).
"""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Callable, Sequence
from numbers import Integral

from polypad.arguments import expect, wrong_type
from polypad.errors import NotAffineError, PolypadError
from polypad.ir import Expr, Var, as_expr, dtypes
from polypad.ir.fold_int import fold_int_constants
from polypad.ir.show import show
from polypad.ir.substitute import substitute
from polypad.isl_failure import raising_isl_failures


def _asking_isl(method):
    """``method``, a question ISL answers: ISL failing in it raises
    :class:`~polypad.errors.IslFailure` naming ``IndexMap.<method>``."""
    operation = f"IndexMap.{method.__name__}"

    @functools.wraps(method)
    def asking(self, *args, **kwargs):
        return raising_isl_failures(operation, lambda: method(self, *args, **kwargs))

    return asking


class _AxisSeparator:
    """Marks, among a map's outputs, where a new physical axis starts (RFC 0039)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "AXIS_SEPARATOR"


AXIS_SEPARATOR = _AxisSeparator()


class IndexMap:
    """A quasi-affine map from logical to transformed buffer indices.

    Build it from a callable with N named parameters (or ``*indices``), or
    from the text of such a lambda.  The callable is traced once per rank
    with fresh IR variables; Python operators build the IR.
    """

    def __init__(self, fn: Callable | str, *, names: Sequence[str] | None = None):
        if not (isinstance(fn, str) or callable(fn)):
            raise wrong_type(fn, "fn", "IndexMap", "a callable or the text of a lambda")
        expect(names, (tuple, list, None), "names", "IndexMap", what="a sequence of str or None")
        if isinstance(fn, str):
            fn, names = _lambda_from_text(fn), names
        self._fn = fn
        self._names = tuple(names) if names is not None else _param_names(fn)
        self._traced: dict[int, tuple[tuple[Var, ...], tuple[Expr, ...], tuple[int, ...]]] = {}
        # Traces with inputs of other integer dtypes, by their dtypes (see __call__).
        self._typed: dict[tuple[str, ...], tuple[tuple[Var, ...], tuple[Expr, ...]]] = {}
        self._fixed = False  # from_exprs: the outputs are given, not traced

    @classmethod
    def from_exprs(cls, inputs: Sequence[Var], outputs: Sequence[Expr],
                   axis_separators: Sequence[int] = ()) -> IndexMap:
        """An index map from explicit input variables and output expressions."""
        inputs, outputs = tuple(inputs), tuple(as_expr(o, "int32") for o in outputs)
        m = cls(lambda *idx: list(substitute(o, dict(zip(inputs, idx))) for o in outputs),
                names=[v.name for v in inputs])
        m._traced[len(inputs)] = (inputs, outputs, tuple(axis_separators))
        m._fixed = True
        return m

    # -- tracing ------------------------------------------------------------

    def trace(self, ndim: int) -> tuple[tuple[Var, ...], tuple[Expr, ...], tuple[int, ...]]:
        """(input variables, output expressions, axis separators) at rank ``ndim``.

        Axis separators are positions among the outputs where a new physical
        axis begins, as RFC 0039 and TVM's ``Buffer.axis_separators`` count.
        """
        expect(ndim, int, "ndim", "IndexMap.trace")
        if ndim not in self._traced:
            self._traced[ndim] = self._do_trace(ndim)
        return self._traced[ndim]

    def _do_trace(self, ndim: int, kinds: tuple[str, ...] | None = None):
        if self._names is not None and len(self._names) != ndim:
            raise PolypadError(
                f"index map takes {len(self._names)} indices but the buffer has {ndim} axes")
        names = self._names or tuple(f"i{k}" for k in range(ndim))
        inputs = tuple(Var(name, kind) for name, kind in zip(names, kinds or ("int32",) * ndim,
                                                             strict=True))
        raw = self._fn(*inputs)
        if not isinstance(raw, (list, tuple)):
            raw = [raw]
        outputs, separators = [], []
        for item in raw:
            if item is AXIS_SEPARATOR:
                separators.append(len(outputs))
                continue
            try:
                outputs.append(as_expr(item, "int32"))
            except TypeError as err:
                raise NotAffineError(f"index map output {item!r} is not an expression") from err
        return inputs, tuple(outputs), tuple(separators)

    def ndim_out(self, ndim: int) -> int:
        """Number of transformed axes for an ``ndim``-axis buffer."""
        return len(self.trace(ndim)[1])

    def __call__(self, *indices) -> list[Expr]:
        """The transformed indices of ``indices`` (IR expressions or ints)."""
        for index in indices:
            expect(index, (int, Expr), "indices", "IndexMap", what="ints or expressions")
        inputs, outputs = self._traced_for(indices)
        mapping = {v: as_expr(x, v.dtype) for v, x in zip(inputs, indices)}
        # Folded: B[4] under i * 1 + 0 is B[4], never B[T.Mul(4, 1) + 0].
        return [fold_int_constants(substitute(o, mapping)) for o in outputs]

    def _traced_for(self, indices) -> tuple[tuple[Var, ...], tuple[Expr, ...]]:
        """The inputs and outputs to substitute ``indices`` into.  Indices of another
        scalar integer dtype than int32 get a trace over inputs of their dtypes, so
        that the map computes in it as the function itself does on such variables:
        ``i // T.int64(4)`` for an int64 ``i``, never ``i // T.int32(4)``."""
        inputs, outputs, _ = self.trace(len(indices))
        kinds = tuple(x.dtype if isinstance(x, Expr) else "int32" for x in indices)
        if self._fixed or all(k == "int32" for k in kinds) or not all(
                dtypes.is_int(k) and dtypes.lanes(k) == 1 for k in kinds):
            return inputs, outputs
        if kinds not in self._typed:
            self._typed[kinds] = self._do_trace(len(kinds), kinds)[:2]
        return self._typed[kinds]

    def __repr__(self) -> str:
        try:
            ndim = len(self._names) if self._names is not None else 1
            inputs, outputs, seps = self.trace(ndim)
        except PolypadError:
            return "IndexMap(<callable>)"
        outs = [show(o) for o in outputs]
        for pos in reversed(seps):
            outs.insert(pos, "AXIS_SEPARATOR")
        return f"IndexMap(lambda {', '.join(v.name for v in inputs)}: [{', '.join(outs)}])"

    # -- questions on a shape (answered by isl) --------------------------------

    def relation(self, shape):
        """The isl map ``{ [logical] -> [transformed] }`` on the logical box."""
        return self._relation(shape, "relation")

    def _relation(self, shape, where: str):
        from .relation import LayoutRelation

        return LayoutRelation(self, _shape(shape, f"IndexMap.{where}"))

    @_asking_isl
    def transformed_shape(self, shape) -> tuple:
        """Extents of the transformed axes: ints, or expressions of shape params."""
        return self._relation(shape, "transformed_shape").transformed_shape()

    @_asking_isl
    def padding_set(self, shape):
        """The ``isl.Set`` of transformed indices no logical index maps to."""
        return self._relation(shape, "padding_set").padding_set()

    @_asking_isl
    def padding_predicate(self, shape, indices: Sequence[Var] | None = None) -> Expr:
        """The padding as a condition on ``indices`` (default: fresh ``i0, i1, ...`` of
        the shape's dtype, int64 where an extent is or a transformed index passes int32),
        simplified within the transformed shape."""
        return self._relation(shape, "padding_predicate").padding_predicate(indices)

    @_asking_isl
    def has_padding(self, shape) -> bool:
        """True when the transformed shape holds indices no logical index maps to."""
        return not self.padding_set(shape).is_empty()

    @_asking_isl
    def inverse(self, shape):
        """The inverse on the non-padding region, with the padding predicate.

        Returns an :class:`~polypad.layout.relation.Inverse` that unpacks as
        ``inverse_map, padding_predicate``.
        """
        return self._relation(shape, "inverse").inverse()

    @_asking_isl
    def is_injective(self, shape) -> bool:
        """True when no two logical indices of ``shape`` share a transformed index."""
        return self._relation(shape, "is_injective").collision() is None

    @_asking_isl
    def is_bijective(self, shape) -> bool:
        """Injective, and every transformed index within the shape is used."""
        rel = self._relation(shape, "is_bijective")
        return rel.collision() is None and rel.padding_set().is_empty()

    @_asking_isl
    def check_injective(self, shape) -> None:
        """Raise :class:`NonInjectiveError` naming two colliding logical indices."""
        self._relation(shape, "check_injective").check_injective()

    @_asking_isl
    def physical_shape(self, shape) -> tuple:
        """The flattened N-d physical shape: row-major within each separator group, each
        group's extent in a dtype that holds it for every value of the shape's parameters
        (int64 where the extents' own may not: :mod:`.physical`)."""
        from .physical import group_shape

        shape = _shape(shape, "IndexMap.physical_shape")
        return group_shape(self.transformed_shape(shape), self.trace(len(shape))[2], shape)

    @_asking_isl
    def pack(self, array, pad_value=None):
        """``array`` in the transformed layout, padding filled with ``pad_value``."""
        from .packing import pack

        _array(array, "IndexMap.pack")
        return pack(self, array, pad_value)

    @_asking_isl
    def unpack(self, array, shape):
        """The logical array of ``shape`` held by the transformed ``array``."""
        from .packing import unpack

        _array(array, "IndexMap.unpack")
        return unpack(self, array, _shape(shape, "IndexMap.unpack"))

    # -- algebra ----------------------------------------------------------------

    def then(self, other: IndexMap) -> IndexMap:
        """The map ``x -> other(self(x))``: first this layout, then ``other``."""
        expect(other, IndexMap, "other", "IndexMap.then")

        def composed(*idx):
            return other(*self(*idx))

        return IndexMap(composed, names=self._names)

    def compose(self, other: IndexMap) -> IndexMap:
        """Mathematical composition ``self ∘ other``: ``x -> self(other(x))``."""
        expect(other, IndexMap, "other", "IndexMap.compose")
        return other.then(self)


def _shape(shape, where: str) -> tuple:
    """``shape`` as a tuple of extents (ints or scalar expressions), or ArgumentTypeError."""
    what = "a tuple of extents (ints or expressions)"
    expect(shape, (tuple, list), "shape", where, what=what)
    for extent in shape:
        expect(extent, (Integral, Expr), "shape", where, what=what)
    return tuple(shape)


def _array(array, where: str) -> None:
    import numpy as np

    expect(array, (np.ndarray, list, tuple), "array", where,
           what="an array (numpy, or nested lists)")


def _param_names(fn: Callable) -> tuple[str, ...] | None:
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return tuple(p.name for p in params)


def _lambda_from_text(text: str) -> Callable:
    """A callable that builds IR from ``lambda ...: [...]`` text (never eval'd)."""
    from polypad.script.parse_expr import ExprParser
    from polypad.script.source import Source

    src = Source("<index map>", tuple(text.strip().splitlines()))
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as err:
        raise src.error_at(err.lineno or 1, err.offset or 1, err.msg) from None
    if not isinstance(tree, ast.Lambda) or tree.args.vararg or tree.args.kwonlyargs:
        raise src.error(tree, "index map text must read `lambda i, j: [...]`")
    names = [a.arg for a in tree.args.args]
    body = tree.body.elts if isinstance(tree.body, (ast.List, ast.Tuple)) else [tree.body]
    parser = ExprParser(src)

    def is_separator(node: ast.expr) -> bool:
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
        return name == "AXIS_SEPARATOR"

    def traced(*idx):
        env = dict(zip(names, idx))
        return [AXIS_SEPARATOR if is_separator(e) else parser.index(e, env) for e in body]

    traced.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return traced
