"""The exact ParseError (line, column, message) for each TVMScript construct polypad refuses.

Each message names the construct and says what to write instead; errors come
in source order (the header of T.match_buffer lines is not read ahead of the
statements before it).  docs/tvmscript.md quotes these messages.  Line 1 of
each text is the decorator.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tvmscript_support import parse_error

from polypad.errors import ParseError

CASES = {
    'iter_var': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.attr(T.iter_var(tx, T.Range(0, 4), "ThreadIndex", "threadIdx.x"), "e", 4)
            A[0] = 0.0
""",
        3, 12,
        (
            'T.iter_var is not supported: write the thread axis as a loop, for tx in '
            'T.thread_binding(n, thread="threadIdx.x")'
        ),
    ),
    'match_buffer_nested': (
        """\
        @T.prim_func
        def f(a: T.handle):
            for i in T.serial(4):
                A = T.match_buffer(a, (4,), "float32")
                A[i] = 1.0
""",
        4, 13,
        (
            'T.match_buffer must stand at the top level of the function body, or in a '
            'block'
        ),
    ),
    'match_buffer_in_block': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    Ai = T.match_buffer(A[i, 0:3], (4,), "float32")
                    Ai[0] = 0.0
""",
        5, 33,
        (
            'T.match_buffer region A[i, 0:3] has extent 3 on axis 1, where the '
            'buffer shape needs 4'
        ),
    ),
    'elem_offset': (
        """\
        @T.prim_func
        def f(a: T.handle):
            A = T.match_buffer(a, (4,), "float32", elem_offset=2)
            A[0] = 1.0
""",
        3, 56,
        (
            'T.match_buffer with elem_offset=2 is not supported: polypad reads '
            'elem_offset= only as 0'
        ),
    ),
    'thread_binding': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.thread_binding(4, thread="warp.x"):
                A[i] = 0.0
""",
        3, 41,
        (
            "unknown thread tag 'warp.x'; polypad reads blockIdx.x, blockIdx.y, "
            "blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, vthread, vthread.x, "
            "vthread.y, vthread.z"
        ),
    ),
    'launch_thread': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.launch_thread("threadIdx.x", 4)
            A[0] = 0.0
""",
        3, 5,
        (
            "T.launch_thread of a thread tag binds a name: write "
            "tx = T.launch_thread('threadIdx.x', n)"
        ),
    ),
    'env_thread': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            tx = T.env_thread("threadIdx.x")
            A[tx] = 0.0
""",
        4, 7,
        (
            "'tx' is a thread axis of T.env_thread; launch it first: "
            "T.launch_thread(tx, extent)"
        ),
    ),
    'vector_into_scalar': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = T.Broadcast(1.0, 4)
""",
        3, 12,
        (
            'cannot store a float32x4 value in the float32 buffer A'
        ),
    ),
    'vector_lanes': (
        """\
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            A[0:4] = T.Broadcast(1.0, 8)
""",
        3, 14,
        (
            'a 4-lane store to A needs a float32x4 value, not float32x8 (broadcast a '
            'scalar with T.Broadcast(v, 4))'
        ),
    ),
    'order': (
        """\
        @T.prim_func
        def f(a: T.handle, b: T.handle):
            A = T.match_buffer(a, (4,), "float32")
            A[0] = undefined_name
            B = T.match_buffer(b, (4,), "flaot32")
""",
        4, 12,
        (
            "undefined name 'undefined_name'"
        ),
    ),
    'order2': (
        """\
        @T.prim_func
        def f(a: T.handle, b: T.handle):
            A = T.match_buffer(a, (4,), "float32")
            B = T.match_buffer(b, (4,), "flaot32")
            A[0] = undefined_name
""",
        4, 33,
        (
            "unknown dtype 'flaot32'"
        ),
    ),
    'alias': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            A_int = T.Buffer((16,), "int32", data=A.data)
            A_int[0] = 1
""",
        3, 29,
        (
            "T.Buffer declares int32 over the float32 memory of 'A': a view keeps its "
            "buffer's dtype"
        ),
    ),
    'twice': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            p = T.allocate([16], "float32", "global")
            X = T.decl_buffer((16,), "float32", data=p)
            Y = T.decl_buffer((4, 4), "float32", data=p)
            A[0] = X[0] + Y[0, 0]
""",
        5, 9,
        (
            "the data 'p' of T.allocate is already declared at line 4: polypad does"
            ' not alias buffers'
        ),
    ),
    'nested': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            p = T.allocate([16], "float32", "global")
            for i in T.serial(4):
                X = T.decl_buffer((16,), "float32", data=p)
                X[i] = 1.0
""",
        5, 13,
        (
            'T.decl_buffer(..., data=p) must stand in the same statement list as '
            "the T.allocate of 'p'"
        ),
    ),
    'count': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            p = T.allocate([16], "float32", "global")
            X = T.decl_buffer((8,), "float32", data=p)
            X[0] = 1.0
""",
        4, 9,
        (
            "T.decl_buffer declares (8,) over the (16,) data 'p': the element "
            'counts must be the same'
        ),
    ),
    'ptrval': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            p = T.allocate([16], "float32", "global")
            A[0] = p
""",
        4, 12,
        (
            "'p' is the data of T.allocate; declare a buffer on it: "
            'T.decl_buffer(shape, dtype, data=p)'
        ),
    ),
    'strides': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            X = T.decl_buffer((16,), "float32", strides=[1])
            X[0] = 1.0
""",
        3, 49,
        (
            'T.decl_buffer with strides= is not supported: polypad buffers are '
            'dense and row-major'
        ),
    ),
    'view_dtype': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            A_half = A.view("float16")
            A_half[0] = T.float16(1)
""",
        3, 21,
        (
            "A.view(dtype) is not supported: a view keeps its buffer's dtype"
        ),
    ),
    'itedtype': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            A[0] = T.if_then_else(A[1] > 0.0, A[2], 0.0, dtype="float16")
""",
        3, 39,
        (
            "T.if_then_else(..., dtype='float16') has a float32 branch"
        ),
    ),
    'dec': (
        """\
        @T.prim_func(target="llvm")
        def f(A: T.Buffer((16,), "float32")):
            A[0] = 1.0
""",
        1, 14,
        (
            "@prim_func has no argument 'target'; polypad reads private, "
            'check_well_formed, s_tir'
        ),
    ),
    'slice_step': (
        """\
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            A[0:6:4] = T.Broadcast(1.0, 2)
""",
        3, 7,
        (
            "a vector store's slice spans a constant number of lanes: b:b + 4, or b:b "
            '+ 16:4 with a step'
        ),
    ),
    'init_without_reduce': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    with T.init():
                        A[vi] = 0.0
""",
        6, 18,
        (
            "with T.init() in block 'B', which declares no reduce axis before it"
        ),
    ),
    'axis_outside_block': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                vi = T.axis.spatial(4, i)
                A[vi] = 0.0
""",
        4, 14,
        (
            'T.axis.spatial must stand inside a with T.block(...) statement'
        ),
    ),
    'remap_counts': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SSR", [i, j])
                    A[vi, vj] = 0.0
""",
        5, 22,
        (
            'T.axis.remap has 3 kinds and 2 bindings for 2 names; the three must '
            'agree'
        ),
    ),
    'axis_in_expression': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    A[T.axis.spatial(4, i)] = 0.0
""",
        5, 15,
        (
            'T.axis.spatial declares a block variable: write it as a statement, vi '
            '= T.axis.spatial(...), inside a block'
        ),
    ),
    'where_outside_block': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                T.where(i < 3)
                A[i] = 0.0
""",
        4, 9,
        (
            'T.where must stand inside a with T.block(...) statement'
        ),
    ),
    'buffer_region': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    T.reads(A[i, 0:4])
                    A[i, 0] = A[i, 0:4]
""",
        6, 28,
        (
            'a slice is not supported as a value: a slice is a buffer region, which '
            'polypad reads in T.reads, T.writes and T.match_buffer only'
        ),
    ),
    'tuple_assign': (
        """\
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            a, b = A[0], A[1]
""",
        3, 5,
        (
            'tuple assignment is not supported; assign one name or buffer element '
            'per statement'
        ),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_refused_construct_has_an_exact_error(name):
    text, line, col, message = CASES[name]
    err = parse_error(text)
    assert type(err) is ParseError
    assert (err.filename, err.lineno, err.col, err.message) == ("kernel.py", line, col, message)
    assert str(err).startswith(f"kernel.py:{line}:{col}: {message}")


# Errors that are not about a TVMScript construct, which the document need not quote.
GENERIC = {"order2"}


@pytest.mark.parametrize("name", sorted(set(CASES) - GENERIC))
def test_docs_quote_the_exact_error(name):
    doc = (Path(__file__).parents[2] / "docs" / "tvmscript.md").read_text()
    assert CASES[name][3] in doc
