"""A block's header: kept while it fits the body, dropped part by part when it does not,
checked by the verifier and compared by structural equality."""

from __future__ import annotations

import dataclasses

import pytest

from polypad.ir import nodes as n
from polypad.ir.block_header import fit, layout
from polypad.ir.structural import first_mismatch, structural_equal
from polypad.ir.verify import problems
from polypad.ir.visitor import Rewriter, walk
from polypad.script import parse

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 6), "float32"),
           C: T.Buffer((8, 6), "float32")):
    for i, j, k in T.grid(8, 6, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.where(i < 8)
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            T.block_attr({"tag": "mm", "sizes": [2, 3]})
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def block_of(f: n.PrimFunc) -> n.Block:
    (block,) = [s for s in walk(f.body) if isinstance(s, n.Block)]
    return block


def test_the_parser_records_what_the_block_declares():
    header = block_of(parse(MATMUL)).header
    assert [(a.var.name, a.kind, a.min.value, a.extent.value) for a in header.axes] == [
        ("vi", "S", 0, 8), ("vj", "S", 0, 6), ("vk", "R", 0, 4)]
    assert header.where and header.init
    assert [r.buffer.name for r in header.reads] == ["A", "B"]
    assert [r.buffer.name for r in header.writes] == ["C"]
    assert header.annotations == (("tag", "mm"), ("sizes", (2, 3)))


def test_layout_finds_each_part_in_the_lowered_body():
    block = block_of(parse(MATMUL))
    parts = layout(block.body, block.header)
    assert [let.var.name for let in parts.lets] == ["vi", "vj", "vk"]
    assert parts.where is parts.lets[-1].body
    assert isinstance(parts.init, n.IfThenElse) and len(parts.after) == 1
    assert parts.init.then_case.buffer.name == "C"


def test_a_split_keeps_the_header_and_new_let_values_fit():
    block = block_of(parse(MATMUL))
    vi_let = block.body
    io, ii = n.Var("io"), n.Var("ii")
    new_let = dataclasses.replace(vi_let, value=io * 4 + ii)
    split = dataclasses.replace(block, body=new_let)
    assert split.header is block.header


def test_other_lets_drop_the_axes_and_what_names_them():
    block = block_of(parse(MATMUL))
    other = n.LetStmt(n.Var("vi"), n.IntImm(0), block.body.body)
    header = dataclasses.replace(block, body=other).header
    assert header == n.BlockHeader(annotations=block.header.annotations)
    assert fit(other, dataclasses.replace(block.header, annotations=())) is None


class _RemoveIfs(Rewriter):
    """Every ``if`` without else replaced by its body (a pass that removes conditionals)."""

    def visit_IfThenElse(self, node):
        body = self.visit(node.then_case)
        return body if node.else_case is None else self.generic_visit(node)


def test_a_pass_that_removes_the_ifs_drops_where_and_init():
    f = parse(MATMUL)
    header = block_of(_RemoveIfs().visit(f)).header
    assert not header.where and not header.init
    assert header.axes == block_of(f).header.axes and header.reads == block_of(f).header.reads


class _Rename(Rewriter):
    """Accesses of one buffer moved to another (what a layout or cache rewrite does)."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_buffer(self, buffer):
        return self.new if buffer is self.old else buffer


def test_a_region_of_a_buffer_the_body_no_longer_accesses_goes():
    f = parse(MATMUL)
    A = f.params[0]
    moved = _Rename(A, n.Buffer("A_cache", (8, 4))).visit(f.body)
    header = block_of(dataclasses.replace(f, body=moved)).header
    assert header.reads is None  # TVM infers them again
    assert header.writes == block_of(f).header.writes


def test_a_region_whose_unit_index_changed_goes():
    f = parse(MATMUL)
    block = block_of(f)
    parts = layout(block.body, block.header)
    (update,) = parts.after
    A, B = f.params[:2]
    vi, vj, vk = (let.var for let in parts.lets)
    same = n.BufferStore(update.buffer, update.value.a + A[vi, vk] * B[vk, vj], update.indices)
    new_body = _replace_stmt(block.body, update, same)
    assert dataclasses.replace(block, body=new_body).header.reads == block.header.reads
    moved = n.BufferStore(update.buffer, update.value.a + A[vi, vk + 1] * B[vk, vj],
                          update.indices)
    new_body = _replace_stmt(block.body, update, moved)
    assert dataclasses.replace(block, body=new_body).header.reads is None


def _replace_stmt(root, old, new):
    class Swap(Rewriter):
        def visit_BufferStore(self, node):
            return new if node is old else node

    return Swap().visit(root)


def test_structural_equality_compares_the_header():
    f, g = parse(MATMUL), parse(MATMUL.replace('"tag": "mm"', '"tag": "other"'))
    assert not structural_equal(f, g)
    assert first_mismatch(f, g).path.endswith("header.annotations[0][1]")
    h = parse(MATMUL.replace('vi, vj, vk = T.axis.remap("SSR", [i, j, k])',
                             'vi = T.axis.spatial(16, i)\n'
                             '            vj, vk = T.axis.remap("SR", [j, k])'))
    assert first_mismatch(f, h).path.endswith("header.axes[0].extent.value")
    assert structural_equal(f, parse(MATMUL))


def test_the_verifier_checks_the_header():
    f = parse(MATMUL)
    block = block_of(f)
    header = block.header
    bad_kind = dataclasses.replace(header.axes[0], kind="X")
    stranger = n.Buffer("D", (8, 6))
    bad_region = n.BufferRegion(stranger, ((header.axes[0].var, n.IntImm(1)),))
    wrong = dataclasses.replace(header, axes=(bad_kind, *header.axes[1:]),
                                writes=(bad_region,))
    # A header made past Block's fit (which would drop the region of a buffer the body
    # does not store) is what the verifier is for.
    made = n.Block(block.name, block.body, header)
    object.__setattr__(made, "header", wrong)
    broken = _with_block(f, made)
    found = problems(broken)
    assert "block 'C': axis 'vi' has the unknown kind 'X'" in found
    assert ("block 'C': a region of buffer 'D', which is neither a parameter nor "
            "allocated here") in found
    assert "block 'C': a region of D has 1 ranges for 2 axes" in found
    assert problems(f) == []


def _with_block(f, new):
    class Swap(Rewriter):
        def visit_Block(self, node):
            return new

    return Swap().visit(f)


@pytest.mark.parametrize("text", [MATMUL, MATMUL.replace("            T.where(i < 8)\n", "")])
def test_a_block_made_with_its_header_is_the_same_node_again(text):
    block = block_of(parse(text))
    again = n.Block(block.name, block.body, block.header)
    assert again.header is block.header and again == block
