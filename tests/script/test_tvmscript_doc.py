"""docs/tvmscript.md's *printed* column says what the printer writes.

Each case names a row of the document (a fragment of its construct cell),
what its printed cell quotes, and a kernel using the construct: printed in
each spelling, the kernel must show what the cell says, and not the forms
the cell says are not printed, and read back to the same function.  So
neither the printer nor the document can change without the other.  Every
row of every table with a printed column has that cell filled in.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from polypad.ir.structural import assert_structural_equal
from polypad.script import parse, script

DOC = (Path(__file__).resolve().parents[2] / "docs" / "tvmscript.md").read_text()
# A cell boundary is a `|` that Markdown does not escape (`\|` is the operator).
_CELL = re.compile(r"(?<!\\)\|")


def _tables() -> list[tuple[list[str], list[list[str]]]]:
    """(header cells, rows of cells) of every table of the document."""
    lines = DOC.splitlines()
    tables = []
    for k, line in enumerate(lines[:-1]):
        if line.startswith("|") and lines[k + 1].startswith("|---") and (
                k == 0 or not lines[k - 1].startswith("|")):
            header = [c.strip() for c in _CELL.split(line)[1:-1]]
            rows = []
            for row in lines[k + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in _CELL.split(row)[1:-1]])
            tables.append((header, rows))
    return tables


TABLES = _tables()


def printed_cell(construct: str) -> str:
    """The printed cell of the one row whose first cell contains ``construct``."""
    found = [row[header.index("printed")] for header, rows in TABLES if "printed" in header
             for row in rows if construct in row[0]]
    assert len(found) == 1, f"{len(found)} rows of docs/tvmscript.md hold {construct!r}"
    return found[0]


@dataclass(frozen=True)
class Row:
    """A row of the document, what its printed cell says, and a kernel to print."""

    construct: str  # a fragment of the row's first cell
    cell: tuple[str, ...]  # fragments of its printed cell
    kernel: str
    shows: dict[str, tuple[str, ...]]  # spelling ("tirx", "tir", "both") -> in the text
    hides: tuple[str, ...] = field(default=())  # in neither spelling's text


ROWS = [
    Row("`T.block_attr({...})`, `T.sblock_attr({...})`",
        ("`T.block_attr({...})` in `tir`", "`T.sblock_attr({...})` in `tirx`"),
        """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.block_attr({"k": 1})
                    A[vi] = 1.0
        """,
        {"tirx": ('T.sblock_attr({"k": 1})',), "tir": ('T.block_attr({"k": 1})',)}),
    Row("`T.reads(A[vi, vk], B[vk, vj])`",
        ("as declared while they fit the body", "`T.reads(A[0:8, 0:4])`"),
        """
        @T.prim_func
        def f(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
            for i in T.serial(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A)
                    T.writes([C[vi]])
                    C[vi] = A[vi, 0] + A[vi, 3]
        """,
        {"both": ("T.reads(A[0:8, 0:4])", "T.writes(C[vi])")}),
    Row("`vi = T.axis.spatial(dom, value)`",
        ('`vi = T.axis.remap("S", [i])`', "`T.axis.S` and `T.axis.R` as `T.axis.spatial`"),
        """
        @T.prim_func
        def f(A: T.Buffer((32,), "float32")):
            for i in T.serial(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.S(32, i * 2)
                    A[vj] = 1.0
        """,
        {"both": ('vi = T.axis.remap("S", [i])', "vj = T.axis.spatial(32, i * 2)")},
        hides=("T.axis.S(",)),
    Row("`T.alloc_buffer`, `T.sblock_alloc_buffer`, `T.alloc_local` in a block",
        ("`T.sblock_alloc_buffer(...)` in `tirx`", "`T.alloc_buffer(...)` in `tir`"),
        """
        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.sblock("B"):
                    vi = T.axis.spatial(4, i)
                    X = T.alloc_local((1,), "float32")
                    X[0] = A[vi]
                    A[vi] = X[0] * 2.0
        """,
        {"tirx": ('X = T.sblock_alloc_buffer((1,), "float32", scope="local")',),
         "tir": ('X = T.alloc_buffer((1,), "float32", scope="local")',)},
        hides=("T.alloc_local",)),
    Row("`Asub = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,))` in a block",
        ("no `T.match_buffer`", "`A[vi * 4 + x]`"),
        """
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            for i in T.serial(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    Asub = T.match_buffer(A[vi * 4:vi * 4 + 4], (4,))
                    for x in T.serial(4):
                        Asub[x] = 1.0
        """,
        {"both": ("A[vi * 4 + x] = 1.0",)}, hides=("T.match_buffer", "Asub")),
    Row("`elem_offset=0`, `align=64`, `offset_factor=1`",
        ('`T.Buffer((4,), "float32", align=64, offset_factor=1)`',
         "all four on `T.decl_buffer`, not"),
        """
        @T.prim_func
        def f(B: T.Buffer((4,), "float32", elem_offset=0, align=64, offset_factor=1)):
            X = T.decl_buffer((4,), "float32", align=64)
            X[0] = 1.0
            B[0] = X[0]
        """,
        {"both": ('B: T.Buffer((4,), "float32", align=64, offset_factor=1)',
                  'X = T.alloc_buffer((4,), "float32")\n')},
        hides=("elem_offset",)),
    Row("`p = T.allocate([16], \"float32\", \"global\")`",
        ("the allocation it became", "`A = T.alloc_buffer(shape, dtype, scope=...)`"),
        """
        @T.prim_func
        def f(B: T.Buffer((4,), "float32")):
            p = T.allocate([16], "float32", "global")
            A = T.decl_buffer((4, 4), "float32", data=p)
            A[0, 0] = 1.0
            B[0] = A[0, 0]
        """,
        {"both": ('A = T.alloc_buffer((4, 4), "float32")',)}, hides=("T.allocate", "data=")),
    Row('`tx = T.env_thread("threadIdx.x")`',
        ('`with T.launch_thread("threadIdx.x", n) as tx:`',
         '`for tx in T.thread_binding(n, thread="threadIdx.x"):`'),
        """
        @T.prim_func
        def f(A: T.Buffer((32,), "float32")):
            tx = T.env_thread("threadIdx.x")
            T.launch_thread(tx, 32)
            A[tx] = 1.0
        """,
        {"tirx": ('with T.launch_thread("threadIdx.x", 32) as tx:',),
         "tir": ('for tx in T.thread_binding(32, thread="threadIdx.x"):',)},
        hides=("T.env_thread",)),
    Row("`for i in T.serial / T.parallel",
        ("`T.grid` as the nested loops",),
        """
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                A[i, j] += 1.0
        """,
        {"both": ("for i in T.serial(4):", "for j in T.serial(4):",
                  "A[i, j] = A[i, j] + 1.0")},
        hides=("T.grid", "+=")),
    Row("`x: T.let[T.int32] = v` (0.27)",
        ("`x: T.let[T.int32] = v` in `tirx`", "`x = v` in `tir`"),
        """
        @T.prim_func
        def f(A: T.Buffer((4,), "int32"), n: T.int32):
            x: T.let[T.int32] = n + 1
            A[0] = x
        """,
        {"tirx": ("x: T.let[T.int32] = n + 1",), "tir": ("x = n + 1",)}),
    Row("`A_1 = A.view(3072)`",
        ('`A_1 = T.decl_buffer((3072,), "float32", data=A.data)`',),
        """
        @T.prim_func(s_tir=True)
        def f(A: T.Buffer((48, 64), "float32")):
            A_1 = A.view(3072)
            A_1[5] = 1.0
        """,
        {"both": ('A_1 = T.decl_buffer((3072,), "float32", data=A.data)',)},
        hides=(".view(",)),
    Row("`T.Select(c, a, b)`", ("as read, `T.Select(c, a, b)`",),
        """
        @T.prim_func
        def f(A: T.Buffer((16,), "float32")):
            for i in T.serial(16):
                A[i] = T.Select(i < 8, A[i], 1.0)
        """,
        {"both": ("T.Select(i < 8, A[i], 1.0)",)}, hides=("T.if_then_else",)),
    Row("`T.Div(a, b)`, `T.truncdiv(a, b)`, `T.truncmod(a, b)`",
        ("`T.Div(a, b)` (for `T.truncdiv` too) and `T.truncmod(a, b)`",),
        """
        @T.prim_func
        def f(A: T.Buffer((3,), "int32"), a: T.int32, b: T.int32):
            A[0] = T.Div(a, b)
            A[1] = T.truncdiv(a, b)
            A[2] = T.truncmod(a, b)
        """,
        {"both": ("A[0] = T.Div(a, b)", "A[1] = T.Div(a, b)", "A[2] = T.truncmod(a, b)")},
        hides=("T.if_then_else", "truncdiv")),
    Row("`&`, `\\|`, `^`", ("`T.bitwise_and(a, b)`", "on bools as `and`"),
        """
        @T.prim_func
        def f(A: T.Buffer((1,), "int32"), a: T.int32, b: T.int32):
            if (a > 0) & (b > 0):
                A[0] = a & b
        """,
        {"both": ("A[0] = T.bitwise_and(a, b)", "if a > 0 and b > 0:")}, hides=("&",)),
    Row("`# from tvm.script import tirx as T`", ("– (neither)",),
        """
        # from tvm.script import tirx as T
        from tvm.script import tir as T

        @T.prim_func(s_tir=True, private=True)
        def f(A: T.Buffer((4,), "float32")):
            A[0] = 1.0
        """,
        {"tirx": ("@T.prim_func(s_tir=True)\n",), "tir": ("@T.prim_func\n",)},
        hides=("import", "private")),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.construct for r in ROWS])
def test_the_printed_cell_says_what_the_printer_writes(row):
    cell = printed_cell(row.construct)
    for fragment in row.cell:
        assert fragment in cell, f"docs/tvmscript.md no longer says {fragment!r}: {cell}"
    f = parse(textwrap.dedent(row.kernel), "tvmscript.md")
    for spelling in ("tirx", "tir"):
        text = script(f, spelling=spelling)
        for fragment in row.shows.get(spelling, ()) + row.shows.get("both", ()):
            assert fragment in text, f"{spelling} does not print {fragment!r}:\n{text}"
        for fragment in row.hides:
            assert fragment not in text, f"{spelling} prints {fragment!r}:\n{text}"
        assert_structural_equal(parse(text), f)


def test_every_row_has_its_printed_cell_filled_in():
    tables = [(header, rows) for header, rows in TABLES if "printed" in header]
    assert len(tables) >= 8
    for header, rows in tables:
        for row in rows:
            assert len(row) == len(header), row[0]
            assert row[header.index("printed")], f"empty printed cell: {row[0]}"
