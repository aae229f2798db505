"""``compute_at`` and ``reverse_compute_at`` with a TVM reduction block that has a
``T.init()``, as TVM 0.27 accepts them.

* ``compute_at`` of the producer of ``A`` into the matmul's ``k``: the iteration's
  ``A[i, k]`` is computed before the block.  The init's store runs at ``k == 0``
  only, which once left the other iterations' instances of the producer with no
  place in the new order (an internal error).
* ``reverse_compute_at`` of the matmul into the producer's loop: the init's store
  reads nothing the loop writes, so it goes with its block instance (the update at
  the same loop values), and runs just before it, as TVM moves a block with its init.
  The block stays whole under the regenerated loops, axes and ``T.init()`` kept, as
  TVM 0.27 prints the same schedule (loops ``ax0, ax1`` there).

Each rewrite: the script it should print (read back and replayed), and original and
rewritten run on random inputs, reference executor and Numba, bit for bit (no sum
changes its order).  An order the dependences forbid is refused with the instances.
"""

from __future__ import annotations

import pytest
from kind_support import check_schedule, same_bits

from analyses.evidence import Element, Instance
from polypad.errors import IllegalTransformError
from polypad.schedule import Schedule
from polypad.script import parse

HEAD = '''
@T.prim_func
def f(X: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
      C: T.Buffer((8, 8), "float32")):
    A = T.alloc_buffer((8, 8), "float32")
'''
PRODUCER = '''    for i, k in T.grid(8, 8):
        with T.block("A"):
            vi, vk = T.axis.remap("SS", [i, k])
            A[vi, vk] = X[vi, vk] * T.float32(2)
'''
MATMUL = HEAD + PRODUCER + '''    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, {a}] * B[vk, vj]
'''


def test_compute_at_into_the_reduction_axis_of_a_block_with_an_init():
    f = parse(MATMUL.format(a="vk"))
    sch = Schedule(f)
    sch.compute_at("A", sch.get_loops("C")[2])
    check_schedule(f, sch, HEAD + '''    for i, j, k in T.grid(8, 8, 8):
        with T.block("A"):
            A[i, k] = X[i, k] * T.float32(2)
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''')
    same_bits(f, sch.func)


def test_reverse_compute_at_moves_the_init_with_its_block():
    f = parse(MATMUL.format(a="vk"))
    sch = Schedule(f)
    sch.reverse_compute_at("C", sch.get_loops("A")[0])
    check_schedule(f, sch, HEAD + '''    for i in T.serial(8):
        for k in T.serial(8):
            with T.block("A"):
                vi, vk = T.axis.remap("SS", [i, k])
                A[vi, vk] = X[vi, vk] * T.float32(2)
        for j, k in T.grid(8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''')
    same_bits(f, sch.func)


def test_reverse_compute_at_into_the_inner_loop_keeps_the_init_in_the_block():
    f = parse(MATMUL.format(a="vk"))
    sch = Schedule(f)
    sch.reverse_compute_at("C", sch.get_loops("A")[1])
    check_schedule(f, sch, HEAD + '''    for i, k in T.grid(8, 8):
        with T.block("A"):
            vi, vk = T.axis.remap("SS", [i, k])
            A[vi, vk] = X[vi, vk] * T.float32(2)
        for j in T.serial(8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''')
    same_bits(f, sch.func)


def test_reverse_compute_at_refuses_an_order_that_runs_the_sum_backwards():
    # C(i, j, k) reads A[i, 7 - k]: it is ready only at iteration 7 - k of the producer's
    # k, so the update at k = 1 would run before the one at k = 0.
    f = parse(MATMUL.format(a="7 - vk"))
    with pytest.raises(IllegalTransformError) as info:
        Schedule(f).reverse_compute_at("C", "A/k")
    evidence = info.value.evidence
    assert evidence.instances == (Instance("C_1", {"i": 0, "j": 0, "k": 0}),
                                  Instance("C_1", {"i": 0, "j": 0, "k": 1}))
    assert evidence.element == Element("C", (0, 0))


def test_compute_at_into_the_inner_part_of_a_split_reduction_axis():
    # The init runs at k_0 == 0 and k_1 == 0: one iteration in eight of the target loop.
    f = parse(MATMUL.format(a="vk"))
    sch = Schedule(f)
    k_0, k_1 = sch.split(sch.get_loops("C")[2], [2, 4])
    sch.compute_at("A", k_1)
    check_schedule(f, sch, HEAD + '''    for i, j, k_0, k_1 in T.grid(8, 8, 2, 4):
        with T.block("A"):
            A[i, 4 * k_0 + k_1] = X[i, 4 * k_0 + k_1] * T.float32(2)
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            vk = T.axis.reduce(8, k_0 * 4 + k_1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
''')
    same_bits(f, sch.func)
