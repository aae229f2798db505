"""The legality rule of ``bind``: a GPU binding must not race.

Binding a loop to a GPU axis claims that its iterations may run on different
threads (or blocks) at once.  The claim holds when the function with the
binding runs on a GPU as it runs serially: the kernels are well formed
(:func:`analyses.gpu_threads.structure`) and every two instances that touch
one element, one writing, are ordered as in the serial program, by one
thread's program order or by a barrier the ``cuda`` target inserts
(:func:`analyses.gpu_sync.plan_barriers`).  A refusal is an
:class:`~polypad.errors.IllegalTransformError` whose ``evidence`` names both
instances, both threads (block and thread indices) and the element.
"""

from __future__ import annotations

from polypad.errors import BuildError, IllegalTransformError
from polypad.ir import nodes as n
from polypad.ir.show import show


def check_bind(bound: n.PrimFunc, node: n.For, name: str, axis: str) -> None:
    """Refuse the function ``bound`` (with ``node``, named ``name``, bound to ``axis``)
    where its kernels cannot run or race."""
    from analyses.evidence import Refuted
    from analyses.gpu_sync import plan_barriers

    if node.kind not in (n.ForKind.SERIAL, n.ForKind.UNROLL) and node.kind.value != axis:
        raise IllegalTransformError(f"bind of loop {name!r} to {axis}: the loop is "
                                    f"{node.kind.value} already")
    try:
        found = plan_barriers(bound)
    except BuildError as error:
        raise IllegalTransformError(f"bind of loop {name!r} to {axis}: {error}") from error
    if isinstance(found, Refuted):
        cex = found.counterexample
        raise IllegalTransformError(
            f"bind of loop {name!r} to {axis} would race: {cex}", cex)


def describe(node: n.For) -> str:
    """How a refusal names a loop."""
    return f"for {node.var.name} in range({show(node.extent)})"
