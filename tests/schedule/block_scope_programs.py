"""Reorders around blocks that bind ``T.axis``, for ``test_reorder_block_scope.py`` and
its TVM cross-check (``tests/interop/test_tvm_block_scope.py``).

Each case: the script (TVM 0.27's spelling, which both read), the loops named (outer
first as TVM lists them for ``reorder``: the new order), and whether TVM 0.27's
``sch.reorder`` takes it.  TVM takes loops of one block scope only and refuses
the rest with "The loops are not in a chain because they are not under the same
scope"; a block with axes between two loops is such a scope boundary.
"""

from __future__ import annotations

#: A block with axis ``vi`` whose body holds the ``k`` loop of an inner block.
INNER_SCOPE = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((8, 4), "float32"), W: T.Buffer((4, 4), "float32"),
      C: T.Buffer((8, 4), "float32")):
    for i in T.serial(8):
        with T.sblock("B"):
            vi = T.axis.spatial(8, i)
            for k, j in T.grid(4, 4):
                with T.sblock("upd"):
                    vk, vj = T.axis.remap("RS", [k, j])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]
'''

INNER_SCOPE_REORDERED = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((8, 4), "float32"), W: T.Buffer((4, 4), "float32"),
      C: T.Buffer((8, 4), "float32")):
    for i in T.serial(8):
        with T.sblock("B"):
            vi = T.axis.spatial(8, i)
            for j, k in T.grid(4, 4):
                with T.sblock("upd"):
                    vk, vj = T.axis.remap("RS", [k, j])
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * W[vk, vj]
'''

#: TVM's blockize of a split reduction: the outer block binds vi and vko, its body
#: holds the ki loop.
BLOCKIZED = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for i, ko in T.grid(8, 2):
        with T.sblock("B_o"):
            vi = T.axis.spatial(8, i)
            vko = T.axis.reduce(2, ko)
            for ki in T.serial(2):
                with T.sblock("B"):
                    vki = T.axis.reduce(2, ki)
                    B[vi] = B[vi] + A[vi, vko * 2 + vki]
'''

BLOCKIZED_REORDERED = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for ko, i in T.grid(2, 8):
        with T.sblock("B_o"):
            vi = T.axis.spatial(8, i)
            vko = T.axis.reduce(2, ko)
            for ki in T.serial(2):
                with T.sblock("B"):
                    vki = T.axis.reduce(2, ki)
                    B[vi] = B[vi] + A[vi, vko * 2 + vki]
'''

#: A row sum: the block binds vi, its body holds the init and the k loop's block.
ACROSS_WITH_INIT = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        with T.sblock("outer"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.float32(0)
            for k in T.serial(4):
                with T.sblock("B"):
                    vk = T.axis.reduce(4, k)
                    B[vi] = B[vi] + A[vi, vk]
'''

#: The same with TVM's T.init() in the inner block, split so that its sizes divide.
ACROSS_SPLIT = '''
@T.prim_func(s_tir=True)
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    for io, ii in T.grid(2, 4):
        with T.sblock("outer"):
            vi = T.axis.spatial(8, io * 4 + ii)
            for k in T.serial(4):
                with T.sblock("B"):
                    vk = T.axis.reduce(4, k)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
'''

#: name -> (program, loops in their new order, TVM accepts, polypad's result or None)
CASES = {
    "inside the block": (INNER_SCOPE, ("j", "k"), True, INNER_SCOPE_REORDERED),
    "around a blockized block": (BLOCKIZED, ("ko", "i"), True, BLOCKIZED_REORDERED),
    "across a block with an init": (ACROSS_WITH_INIT, ("k", "i"), False, None),
    "across a split's block": (ACROSS_SPLIT, ("k", "ii"), False, None),
    "across, outer first": (ACROSS_SPLIT, ("io", "k"), False, None),
}
