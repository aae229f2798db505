"""GPU thread axes: ``T.thread_binding``, ``T.env_thread`` and ``T.launch_thread``.

polypad builds CPU kernels, but TVM kernels bind loops to GPU threads.  A
thread axis is read as a loop whose :class:`~polypad.ir.nodes.ForKind` is
the thread tag (``ForKind.THREAD_IDX_X`` for ``"threadIdx.x"``): the IR
keeps the binding and the printer writes it back, and both executors run it
as a serial loop.  That is a valid execution of a race-free GPU kernel
without barriers, which is every kernel polypad can read (it has no
``T.tvm_storage_sync``).  Every spelling becomes the same loop::

    for tx in T.thread_binding(4, thread="threadIdx.x"):  body
    # with TVM's hints, kept on the loop: T.thread_binding(4, thread=..., annotations={...})

    tx = T.env_thread("threadIdx.x")             # then, for the rest of the list:
    T.launch_thread(tx, 4)                       # or: with T.launch_thread(tx, 4):
    tx = T.launch_thread("threadIdx.x", 4)       # or: with T.launch_thread("threadIdx.x", 4) as tx:

and prints as the first.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir.nodes import For, ForKind, IntImm, Var
from .source import Source, bind_args, string_arg

#: Thread tag -> loop kind.
THREAD_KINDS = {k.value: k for k in ForKind
                if k not in (ForKind.SERIAL, ForKind.PARALLEL, ForKind.VECTORIZED,
                             ForKind.UNROLL)}


@dataclass(frozen=True, eq=False)
class EnvThread:
    """``tx = T.env_thread("threadIdx.x")``: a thread axis waiting for ``T.launch_thread``."""

    name: str
    kind: ForKind


def thread_kind(src: Source, node: ast.expr | None, call: ast.Call, fn: str) -> ForKind:
    """The loop kind of a thread tag such as ``"threadIdx.x"``."""
    if node is None:
        raise src.error(call, f"{fn} needs the argument 'thread'")
    tag = string_arg(src, node, "a thread tag")
    kind = THREAD_KINDS.get(tag)
    if kind is None:
        raise src.error(node, f"unknown thread tag {tag!r}; polypad reads "
                              f"{', '.join(THREAD_KINDS)}")
    return kind


def thread_binding(src: Source, call: ast.Call):
    """``T.thread_binding([start,] stop, thread=tag)``: ``(start, stop or None, kind)``.

    ``annotations={...}`` (``sch.annotate`` on a bound loop) is TVM's hint on the
    loop, as on any loop: the loop parser takes it off ``call`` before this, keeps it
    on :attr:`~polypad.ir.nodes.For.annotations` and the printer writes it back."""
    start, stop, thread = bind_args(src, call, "T.thread_binding", ("start", "stop", "thread"),
                                    1)
    kind = thread_kind(src, thread, call, "T.thread_binding")
    return start, stop, kind


def env_thread(src: Source, call: ast.Call, name: str) -> EnvThread:
    """``name = T.env_thread(tag)``."""
    (tag,) = bind_args(src, call, "T.env_thread", ("thread_tag",), 1)
    return EnvThread(name, thread_kind(src, tag, call, "T.env_thread"))


def launch_thread(src: Source, call: ast.Call, name: str | None, exprs, env: dict):
    """``T.launch_thread(tx, n)`` or ``T.launch_thread("threadIdx.x", n)``: ``(var, make)``.

    ``name`` is the name the statement binds (``tx = ...`` or ``as tx``);
    ``make(body)`` is the loop over ``body``.
    """
    axis, extent_node = bind_args(src, call, "T.launch_thread", ("thread", "extent"), 2)
    if isinstance(axis, ast.Name) and isinstance(env.get(axis.id), EnvThread):
        if name is not None and name != axis.id:
            raise src.error(call, f"T.launch_thread({axis.id}, ...) launches {axis.id!r}, "
                                  f"not {name!r}")
        kind, name = env[axis.id].kind, axis.id
    elif isinstance(axis, ast.Constant) and isinstance(axis.value, str):
        kind = thread_kind(src, axis, call, "T.launch_thread")
        if name is None:
            raise src.error(call, "T.launch_thread of a thread tag binds a name: write "
                                  f"tx = T.launch_thread({axis.value!r}, n)")
    else:
        raise src.error(axis, "T.launch_thread takes a T.env_thread variable or a thread tag")
    extent = exprs.index(extent_node, env)
    var = Var(name, extent.dtype)
    span = src.span(call)

    def make(body):
        return For(var, IntImm(0, extent.dtype), extent, kind, body, span=span, launched=True)
    return var, make
