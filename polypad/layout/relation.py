"""An index map on a concrete (or symbolic) shape, as an isl relation.

``LayoutRelation`` builds ``{ L[i...] -> T[o...] : 0 <= i < shape }`` once and
answers every layout question from it with isl operations: ``dim_max`` for
the transformed extents, ``subtract`` for the padding, ``gist`` to simplify
the padding predicate within the transformed box, ``reverse`` +
``as_pw_multi_aff`` for the inverse, and ``apply_range(reverse)`` for the
pairs of logical indices that collide.  None of these enumerate points.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import islpy as isl

from polypad.errors import IllegalTransformError, NonInjectiveError, NotAffineError, PolypadError
from polypad.ir import BoolImm, Expr, Var, as_expr, walk
from polypad.ir.operators import negate
from polypad.model.affine import AffineSpace, to_pw_aff
from polypad.model.exact_forms import exact_form, may_wrap, no_exact_form
from polypad.model.isl_helpers import coordinate
from polypad.model.overflow import point_outside
from polypad.model.ranges import fits
from polypad.model.to_ir import pw_aff_to_expr, set_to_condition


@dataclass(frozen=True)
class Inverse:
    """The inverse of a layout on its non-padding region.

    ``index_map`` maps transformed indices back to logical ones; it is valid
    where ``padding_predicate`` is false.  Unpacks as a pair.
    """

    index_map: object
    padding_predicate: Expr

    def __iter__(self):
        return iter((self.index_map, self.padding_predicate))


@dataclass(frozen=True)
class Collision:
    """Two logical indices that a non-injective layout maps to one place."""

    first: tuple[int, ...]
    second: tuple[int, ...]
    transformed: tuple[int, ...]
    params: dict

    def __str__(self) -> str:
        where = f" (with {', '.join(f'{k} = {v}' for k, v in self.params.items())})" \
            if self.params else ""
        return (f"logical indices {list(self.first)} and {list(self.second)} both map to "
                f"{list(self.transformed)}{where}")


class LayoutRelation:
    """``index_map`` restricted to the logical box of ``shape``."""

    def __init__(self, index_map, shape):
        self.index_map = index_map
        self.shape = tuple(shape)
        self.inputs, self.outputs, self.separators = index_map.trace(len(self.shape))
        self.space = AffineSpace(self.inputs, tuple_name="L")
        box = self.space.universe
        for var, extent in zip(self.inputs, self.shape):
            pv = self.space.var(var)
            box = box & pv.ge_set(self.space.const(0)) & pv.lt_set(self._extent(extent))
        self.logical_box = box
        rel = None
        for expr in self.outputs:
            piece = isl.Map.from_pw_aff(to_pw_aff(expr, self.space))
            rel = piece if rel is None else rel.flat_range_product(piece)
        if rel is None:
            raise PolypadError("an index map needs at least one output")
        self.map = rel.intersect_domain(box).set_tuple_name(isl.dim_type.out, "T")

    def _extent(self, extent) -> isl.PwAff:
        return to_pw_aff(as_expr(extent, _int_dtype(extent)), self.space)

    @cached_property
    def image(self) -> isl.Set:
        """The transformed indices that some logical index maps to."""
        return self.map.range()

    @cached_property
    def extents(self) -> list[isl.PwAff]:
        """Per transformed axis, the extent as an isl function of the parameters."""
        out = []
        for k in range(self.image.dim(isl.dim_type.set)):
            low = self.image.dim_min(k)
            zero = isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(low.get_domain_space()))
            if not low.lt_set(zero).is_empty():
                raise PolypadError(
                    f"index map {self.index_map!r} sends logical indices of shape "
                    f"{list(_shape_names(self.shape))} to negative values on transformed "
                    f"axis {k}; add an offset to the map")
            out.append(_simplest_upper_bound(self.image, k) + 1)
        return out

    def transformed_shape(self) -> tuple:
        """Extents of the transformed axes: ints when constant, else expressions."""
        return tuple(_as_extent(pa, self.space) for pa in self.extents)

    @cached_property
    def transformed_box(self) -> isl.Set:
        """``{ T[o...] : 0 <= o < extent }``."""
        space = self.image.get_space()
        box = isl.Set.universe(space)
        zero = isl.PwAff.zero_on_domain(isl.LocalSpace.from_space(space))
        for k, extent in enumerate(self.extents):
            axis = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(space), isl.dim_type.set, k)
            box = box & axis.ge_set(zero) & axis.lt_set(extent.insert_domain(space))
        return box

    def padding_set(self) -> isl.Set:
        """Transformed indices within the transformed shape that nothing maps to."""
        return self.transformed_box.subtract(self.image).coalesce()

    def output_vars(self, indices=None) -> tuple[Var, ...]:
        if indices is not None:
            indices = tuple(indices)
            if len(indices) != len(self.outputs):
                raise PolypadError(f"expected {len(self.outputs)} transformed indices, "
                                   f"got {len(indices)}")
            return indices
        return tuple(Var(f"i{k}", self.index_dtype) for k in range(len(self.outputs)))

    @cached_property
    def index_dtype(self) -> str:
        """The dtype of the transformed indices the relation names itself: the shape's
        (``int64`` where an extent is), and ``int64`` also where a transformed index
        passes ``2**31 - 1`` for some value of the shape's parameters (a flattened
        ``70000 x 70000``), so that every index of the transformed shape is a value of
        it; else ``int32``, as TVM's."""
        if any(_int_dtype(extent) == "int64" for extent in self.shape):
            return "int64"
        params = AffineSpace((), names=self.space.names)
        for k in range(self.image.dim(isl.dim_type.set)):
            last = self.image.dim_max(k)
            if point_outside(last, "int32", last.domain(), params) is not None:
                return "int64"
        return "int32"

    def padding_predicate(self, indices=None) -> Expr:
        """The padding set as a condition, simplified within the transformed box.

        Two conditions say it: the padding set's own, and the negation of the image's
        (gist of a union keeps every piece; the image is often one convex piece whose
        negation is far simpler, ``4*i0 + i1 >= n``).  The simpler of those that have a
        form exact at every transformed index (:meth:`_condition`) is the answer:
        ``2 * i0 == n - 1 and i1 >= 4`` for ``[(4*i + j) // 8, (4*i + j) % 8]`` on an
        int64 ``(n, 4)``, whose image's ``8 * i0 + i1 < 4 * n`` wraps.  Refused only
        where neither has one, with the padding set's own error (an
        :class:`IllegalTransformError` naming a point where its form wraps, or the
        :class:`NotAffineError` of a constant past int64).
        """
        padding = self.padding_set()
        if padding.is_empty():
            return BoolImm(False)
        box, out = self.transformed_box, self.output_vars(indices)
        found, refusals = [], []
        for build in (lambda: self._condition(padding.gist(box).coalesce(), out),
                      lambda: negate(self._condition(self.image.gist(box).coalesce(), out))):
            try:
                found.append(build())
            except (IllegalTransformError, NotAffineError) as err:
                refusals.append(err)
        if not found:
            raise refusals[0]
        return min(found, key=_size)

    def _condition(self, s: isl.Set, out) -> Expr:
        """``s`` as a condition on ``out``: the reader's form where it cannot wrap
        within the transformed box, else written over int64 (``4 * i0 + i1 >= n``
        wraps at the last ``i0`` for ``n = 2**31 - 1``)."""
        plain = set_to_condition(s, out, self.space.names)
        space = AffineSpace(out, names=self.space.names)
        where = space.universe.intersect(self.transformed_box.reset_tuple_id())
        if not may_wrap(plain, space, where):
            return plain
        try:
            return set_to_condition(s, out, self.space.names, exact=True)
        except NotAffineError:
            # int64 has no wider form: a condition that may wrap is refused, with where.
            raise no_exact_form(plain, space, where) from None

    def inverse(self, indices=None) -> Inverse:
        """The inverse map on the image, and the padding predicate.

        The inverse is an index map of the same class as ``index_map`` (an
        :class:`~polypad.layout.IndexMap`), made with its ``from_exprs``.
        """
        self.check_injective()
        outs = self.output_vars(indices)
        inverse = self.map.reverse().as_pw_multi_aff().gist(self.image)
        exprs = [pw_aff_to_expr(inverse.get_pw_aff(k), outs, self.space.names)
                 for k in range(len(self.inputs))]
        return Inverse(type(self.index_map).from_exprs(outs, exprs),
                       self.padding_predicate(outs))

    def collision(self) -> Collision | None:
        """Two distinct logical indices with one image, or None when injective."""
        same_image = self.map.apply_range(self.map.reverse())
        identity = isl.Map.identity(same_image.get_space()).intersect_domain(self.logical_box)
        pairs = same_image.subtract(identity)
        if pairs.is_empty():
            return None
        point = pairs.wrap().sample_point()
        n = len(self.inputs)
        coords = [coordinate(point, isl.dim_type.set, k) for k in range(2 * n)]
        params = {point.get_space().get_dim_name(isl.dim_type.param, k):
                  coordinate(point, isl.dim_type.param, k)
                  for k in range(point.get_space().dim(isl.dim_type.param))}
        first, second = tuple(coords[:n]), tuple(coords[n:])
        transformed = tuple(_evaluate(self.map, first, params))
        return Collision(first, second, transformed, params)

    def check_injective(self) -> None:
        """Raise :class:`NonInjectiveError` naming two colliding logical indices."""
        found = self.collision()
        if found is not None:
            raise NonInjectiveError(f"index map {self.index_map!r} is not injective on shape "
                                    f"{list(_shape_names(self.shape))}: {found}", found)

    def __repr__(self) -> str:
        from polypad.ir.show import show

        def text(extent) -> str:
            return str(extent) if isinstance(extent, int) else show(extent)

        shape = ", ".join(map(text, self.shape))
        try:
            out = ", ".join(map(text, self.transformed_shape()))
            padding = self.padding_predicate()
        except PolypadError as err:  # a repr never raises
            return f"LayoutRelation({self.index_map!r} on [{shape}]: {err})"
        return (f"LayoutRelation({self.index_map!r} on [{shape}] -> [{out}], "
                f"padding where {show(padding)})")

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the shapes, the padding and the two grids.

        Drawn by :mod:`polypad.viz`, imported here only."""
        from polypad.viz.display import layout_html

        return layout_html(self)


def _int_dtype(extent) -> str:
    """The integer dtype of a shape's ``extent``: an expression's own (int64 for an
    int64 one, int32 for a narrower one), int64 for a Python int past int32."""
    if isinstance(extent, Expr):
        return "int64" if extent.dtype == "int64" else "int32"
    return "int32" if fits(int(extent), "int32") else "int64"


def _size(expr: Expr) -> int:
    return sum(1 for _ in walk(expr))


def _evaluate(rel: isl.Map, logical, params) -> list[int]:
    """The image of one logical point (parameters fixed as given)."""
    dom = rel.domain()
    point_set = isl.Set.universe(dom.get_space())
    for k, value in enumerate(logical):
        point_set = point_set.fix_val(isl.dim_type.set, k, isl.Val(str(value)))
    for k in range(dom.get_space().dim(isl.dim_type.param)):
        name = dom.get_space().get_dim_name(isl.dim_type.param, k)
        point_set = point_set.fix_val(isl.dim_type.param, k, isl.Val(str(params[name])))
    image = rel.intersect_domain(point_set).range().sample_point()
    return [coordinate(image, isl.dim_type.set, k)
            for k in range(image.get_space().dim(isl.dim_type.set))]


def _simplest_upper_bound(image: isl.Set, k: int) -> isl.PwAff:
    """An upper bound of axis ``k`` valid for every parameter value, preferring
    constants: ``i % 4`` on ``[n]`` has extent 4, not the piecewise ``min(n, 4)``."""
    exact = image.dim_max(k)
    pieces = []
    exact.foreach_piece(lambda s, aff: pieces.append(aff))
    if len(pieces) <= 1:
        return exact
    axis = isl.PwAff.var_on_domain(isl.LocalSpace.from_space(image.get_space()),
                                   isl.dim_type.set, k)
    candidates = sorted(pieces, key=lambda aff: not aff.is_cst())
    for aff in candidates:
        bound = isl.PwAff.from_aff(aff).insert_domain(image.get_space())
        if image.intersect(axis.gt_set(bound)).is_empty():
            return isl.PwAff.from_aff(aff).intersect_domain(exact.domain())
    return exact


def _as_extent(pa: isl.PwAff, space: AffineSpace):
    """An extent as an int when constant, else an IR expression in shape params, in a
    form that does not wrap for any value of their dtypes (:func:`.exact_form`):
    ``(n + 3) // 4`` would be negative at ``n = 2**31 - 1``."""
    pieces = []
    pa.foreach_piece(lambda s, aff: pieces.append(aff))
    if len(pieces) == 1 and pieces[0].is_cst():
        return pieces[0].get_constant_val().to_python()
    params = AffineSpace((), names=space.names)
    # Where the extent is defined: the sizes that leave the logical box not empty.
    runs = params.universe.intersect_params(pa.domain())
    return exact_form(pa, [], space.names, params, params.universe, runs)


def _shape_names(shape):
    for extent in shape:
        yield extent.name if isinstance(extent, Var) else extent

