"""Layouts: ``IndexMap`` (transformed shape, padding, inverse, injectivity,
axis separators) and numpy packing between logical and transformed data."""

from .index_map import AXIS_SEPARATOR, IndexMap
from .packing import pack, unpack
from .relation import Collision, Inverse, LayoutRelation

__all__ = ["AXIS_SEPARATOR", "IndexMap", "pack", "unpack", "Collision", "Inverse",
           "LayoutRelation"]
