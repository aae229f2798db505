"""Schedule primitives: the layout family (RFC 0077, RFC 0039).

* :meth:`LayoutPrimitives.transform_layout` — a buffer's new layout, with
  padding and a pad value (:mod:`.layout_transform`);
* :meth:`LayoutPrimitives.cache_read` / :meth:`LayoutPrimitives.cache_write` —
  an internal copy of a buffer, whose layout can change without changing
  the function's interface (:mod:`.cache_read`, :mod:`.cache_write`).

Each method delegates the rewrite to its module; the ``@primitive``
decorator checks the arguments (as :mod:`.primitives` declares them),
installs the result and records the call in the trace.
"""

from __future__ import annotations

from .cache_read import cache_read as _cache_read
from .cache_write import cache_write as _cache_write
from .layout_transform import transform_layout as _transform_layout
from .state import primitive


class LayoutPrimitives:
    """Mixin of :class:`~polypad.schedule.Schedule`."""

    @primitive
    def transform_layout(self, block, buffer, index_map, pad_value=None):
        """Give ``buffer`` the layout ``index_map``; every access is rewritten.

        ``block``: the name of a block that accesses the buffer, or ``None``;
        ``buffer``: its name or the ``Buffer``; ``index_map``: an ``IndexMap``,
        a callable or ``"lambda i: [i // 4, i % 4]"`` text, with
        ``AXIS_SEPARATOR`` among the outputs for an N-d physical layout.
        ``pad_value``: ``None`` (nothing may touch the padding), a number,
        ``T.undef()``, or a callable/text ``lambda io, ii: ...`` of the
        transformed indices that may read only the buffer itself.

        >>> sch.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=0.0)

        Raises :class:`NotAffineError`, :class:`NonInjectiveError`, and
        :class:`IllegalTransformError` for a parameter when the schedule
        preserves the interface, or for a pad value that reads another buffer.
        """
        return _transform_layout(self.func, block, buffer, index_map, pad_value,
                                 preserve_interface=self.preserve_interface)

    @primitive
    def cache_read(self, block, buffer, scope="global", name=None, *, at=None):
        """Make ``block`` read ``buffer`` through a new copy; returns the copy's name.

        The cache (``A_cache``, or ``A_<scope>``) is allocated and filled before
        the block's stage, or at the start of the buffer's scope when nothing
        writes the buffer before.  ``block=None`` redirects every read.  With
        ``at=loop`` it is allocated inside that loop, the size of one
        iteration's region, and filled there (:mod:`.cache_at`).

        >>> sch.cache_read("compute", "A")        # 'A_cache'
        """
        return _cache_read(self.func, block, buffer, scope, name, at=at)

    @primitive
    def cache_write(self, block, buffer, scope="global", name=None, *, at=None):
        """Make ``block`` write ``buffer`` into a new copy, copied out after the block's
        stage; returns the copy's name.  The block must write all of the buffer and
        read only what it wrote (checked exactly, with a counterexample).  With
        ``at=loop`` the copy is a tile allocated inside that loop and flushed at the
        end of each iteration, a register tile (:mod:`.cache_at`).

        >>> sch.cache_write("compute", "B")       # 'B_cache'
        >>> sch.cache_write("C", "C", "local", at="jo")   # 'C_local'
        """
        return _cache_write(self.func, block, buffer, scope, name, at=at)

