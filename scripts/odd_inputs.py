# The lambdas below are called at once, inside the loop that binds their variables
# (B023), and the tables of odd inputs read best one to a line (E501).
# ruff: noqa: B023, E501
"""Throw odd inputs at polypad's public API and list what escapes the error hierarchy.

Every exception a public call raises for bad input should be a ``PolypadError``
(polypad/errors.py); anything else -- an ``isl.Error``, a ``Z3Exception``, a
``KeyError`` -- is printed with where it was raised.  Run from the repository root:

    PYTHONPATH=$PWD python scripts/odd_inputs.py

It takes a few minutes (it builds only for the reference executor).  Left out as
not polypad's to wrap: an index map whose own lambda fails on its arguments,
``assert_structural_equal``'s ``AssertionError`` (a test helper, as numpy's), and
Python's ``TypeError`` for a keyword argument to a kernel.
"""

from __future__ import annotations

import time
import traceback

import numpy as np

import analyses
import codegen
import polypad as pp
from polypad.errors import PolypadError
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

leaks = []


def t(label, fn):
    """Call ``fn``; record an exception outside polypad's hierarchy."""
    t0 = time.time()
    try:
        return fn()
    except PolypadError:
        return None
    except Exception as e:  # noqa: BLE001 - the point is to see every other kind
        tb = traceback.extract_tb(e.__traceback__)[-1]
        leaks.append((label, type(e).__name__, str(e)[:200], f"{tb.filename}:{tb.lineno}"))
        print("LEAK", leaks[-1], flush=True)
    finally:
        if time.time() - t0 > 10:
            print("SLOW", label, round(time.time() - t0), flush=True)
    return None


# ---------------------------------------------------------------- odd scripts
texts = ["", "x", "def f(): pass", "@T.prim_func\ndef f():\n    pass",
 "@T.prim_func\ndef f(A: T.Buffer((0,), 'float32')):\n    A[0] = 1.0",
 "@T.prim_func\ndef f(A: T.Buffer((-3,), 'float32')):\n    A[0] = 1.0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0, 1] = 1.0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = A",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in T.serial(4, 2, 3):\n        A[i] = 1.0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in T.serial():\n        A[i] = 1.0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in T.grid():\n        A[0] = 1.0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = T.float32(1e40)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int8')):\n    A[0] = T.int8(300)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = 1.0 // 0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[0] = 1 // 0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[0] = 1 % 0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i // 0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i % 0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[T.floordiv(i, 0)] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i // -2] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[0] = 2 ** 70",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[0] = T.int64(2 ** 70)",
 "@T.prim_func\ndef f(A: T.Buffer((2**40,), 'int32')):\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[2**40] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(2**40):\n        A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(T.int64(2**62)):\n        A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(T.int64(2**62)):\n        A[i * 4] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i * 2**62] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i // 2**62] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    T.assume(1 // 0 == 0)\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32'), n: T.int32):\n    T.assume(n // 0 == 0)\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32'), n: T.int32):\n    if n % 0 == 1:\n        A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32'), n: T.int64):\n    for i in T.serial(n):\n        A[i * 4611686018427387904] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = T.undef()",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[T.undef()] = 1.0",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = T.if_then_else(i < 2, 1)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = T.min(i)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = T.max()",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = T.likely()",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    T.assume()\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        with T.block('b'):\n            vi = T.axis.spatial(0, i)\n            A[vi] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        with T.block('b'):\n            vi = T.axis.spatial((3, 1), i)\n            A[vi] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(T.int8(4)):\n        with T.block('b'):\n            vi = T.axis.spatial(128, i)\n            A[vi] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        with T.block('b'):\n            vi = T.axis.spatial(2**40, i)\n            A[vi] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i, j in T.grid(4):\n        A[i] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.grid(4, 4):\n        A[i] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    B = T.alloc_buffer((0,), 'int32')\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    B = T.alloc_buffer((-1,), 'int32')\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    B = T.alloc_buffer((4,), 'nonsense')\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32x4')):\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'bool')):\n    A[0] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'float16')):\n    A[0] = T.float16(70000.0)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'uint8')):\n    A[0] = T.uint8(-1)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32'), n: T.uint32):\n    for i in T.serial(n):\n        A[i] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32'), n: T.float32):\n    for i in T.serial(n):\n        A[i] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32'), n: T.bool):\n    for i in T.serial(4):\n        if n:\n            A[i] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = i << 40",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = i >> -1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i << 1] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i & 1] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[-i] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4, 4), 'int32')):\n    for i in T.serial(4):\n        A[i] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i:i+2] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = A[i:i+2]",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[i] = A[::2]",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[T.Ramp(0, 1, 0)] = 1",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    for i in T.serial(4):\n        A[T.Ramp(0, 1, -2)] = T.Broadcast(1, -2)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[0:0] = T.Broadcast(1, 0)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[0:8] = T.Broadcast(1, 8)",
 "@T.prim_func\ndef f(A: T.Buffer((4,), 'int32')):\n    A[0:4:2] = T.Broadcast(1, 2)",
]

for k, text in enumerate(texts):
    h = t(f"parse[{k}]", lambda: pp.parse(text))
    if not isinstance(h, n.PrimFunc):
        continue
    t(f"script[{k}]", lambda: pp.parse(pp.script(h)))
    t(f"simplify[{k}]", lambda: pp.transform.simplify(h))
    t(f"touched[{k}]", lambda: analyses.domain_touched(h, "A"))
    t(f"build[{k}]", lambda: codegen.build(h, target="python"))
    t(f"loops[{k}]", lambda: pp.Schedule(h).get_loops())
    t(f"rbto[{k}]", lambda: pp.transform.remove_branching_through_overcompute(h))

# ---------------------------------------------------------------- odd arguments
BASE = '''
@T.prim_func
def f(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
    for i in T.serial(14):
        with T.block("compute"):
            vi = T.axis.spatial(14, i)
            B[vi] = 2.0 * A[vi]
'''
SYM = '''
@T.prim_func
def g(n: T.int32, A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for i in T.serial(n):
        B[i] = A[i]
'''
MM = '''
@T.prim_func
def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''
f, g, mm = pp.parse(BASE), pp.parse(SYM), pp.parse(MM)

maps = [lambda i: [i // 0, i % 4], lambda i: [i // 4], lambda i: [i * i], lambda i: [], lambda i: i,
        lambda i: [i // -4, i % -4], lambda i: [i // 4, i % 4, 0], lambda i, j: [i], lambda: [0],
        lambda i: [i + 2**40], lambda i: [i * 2**40], lambda i: ["x"], lambda i: [1.5 * i], lambda i: [None],
        lambda i: [i // 2**40, i % 2**40], "lambda i: [i //", "lambda i: [i // 4, i % 4]", 42, None,
        lambda i=3: [i], lambda i: [pp.AXIS_SEPARATOR, i], lambda i: [i, pp.AXIS_SEPARATOR],
        lambda i: [i // 4, pp.AXIS_SEPARATOR, i % 4]]
shapes = [(14,), (0,), (-3,), (), (14, 3), ("n",), (2**40,), (1.5,), None, 14, (n.Var("n", "int32"),),
          (n.Var("x", "float32"),), (n.Var("n", "int8"),), (True,)]
for a, m in enumerate(maps):
    im = t(f"IndexMap[{a}]", lambda: pp.IndexMap(m))
    if im is None:
        continue
    for s in shapes:
        for meth in ["transformed_shape", "padding_predicate", "padding_set", "inverse", "is_injective", "is_bijective"]:
            t(f"IndexMap[{a}].{meth}{s}", lambda: getattr(im, meth)(s))

sch_calls = {
 "get_loops bad": lambda s: s.get_loops("nope"),
 "get_loops int": lambda s: s.get_loops(3),
 "split neg": lambda s: s.split("i", [None, -1]),
 "split zero": lambda s: s.split("i", [None, 0]),
 "split float": lambda s: s.split("i", [None, 2.5]),
 "split str": lambda s: s.split("i", "4"),
 "split big": lambda s: s.split("i", [None, 2**40]),
 "split big2": lambda s: s.split("i", [2**40, None]),
 "split 3": lambda s: s.split("i", [None, 2**20, 2**20]),
 "split tail": lambda s: s.split("i", [None, 4], tail="nope"),
 "split tail int": lambda s: s.split("i", [None, 4], tail=3),
 "split loopobj": lambda s: s.split(3, [None, 4]),
 "split None": lambda s: s.split(None, [None, 4]),
 "fuse none": lambda s: s.fuse(),
 "fuse same": lambda s: s.fuse("i", "i"),
 "reorder same": lambda s: s.reorder("i", "i"),
 "reorder none": lambda s: s.reorder(),
 "parallel bad": lambda s: s.parallel("zz"),
 "vectorize": lambda s: s.vectorize("i"),
 "unroll": lambda s: s.unroll("i"),
 "bind bad": lambda s: s.bind("i", "blockIdx.w"),
 "bind int": lambda s: s.bind("i", 3),
 "compute_at self": lambda s: s.compute_at("compute", "i"),
 "rcompute_at self": lambda s: s.reverse_compute_at("compute", "i"),
 "tl bad buffer": lambda s: s.transform_layout("compute", "Z", lambda i: [i]),
 "tl int buffer": lambda s: s.transform_layout("compute", 3, lambda i: [i]),
 "tl bad map": lambda s: s.transform_layout("compute", "A", lambda i: [i // 0]),
 "tl arity": lambda s: s.transform_layout("compute", "A", lambda i, j: [i]),
 "tl noninj": lambda s: s.transform_layout("compute", "A", lambda i: [i // 2]),
 "tl pad str": lambda s: s.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value="x"),
 "tl pad obj": lambda s: s.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=object()),
 "tl pad lambda": lambda s: s.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=lambda a: a),
 "tl pad nan": lambda s: s.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=float("nan")),
 "tl pad inf": lambda s: s.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=float("inf")),
 "tl pad huge": lambda s: s.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=1e300),
 "tl pad int huge": lambda s: s.transform_layout("compute", "B", lambda i: [i // 4, i % 4], pad_value=2**80),
 "tl big": lambda s: s.transform_layout("compute", "B", lambda i: [i * 2**40]),
 "seq bad": lambda s: s.sequential_buffer_access("compute", "Z"),
 "seq": lambda s: s.sequential_buffer_access("compute", "A"),
 "rbto": lambda s: s.remove_branching_through_overcompute("zzz"),
 "cache_read bad scope": lambda s: s.cache_read("compute", "A", "texture"),
 "cache_read int": lambda s: s.cache_read("compute", 0, "shared"),
 "cache_read at bad": lambda s: s.cache_read("compute", "A", "shared", at="zz"),
 "cache_write": lambda s: s.cache_write("compute", "B", "local"),
 "decompose": lambda s: s.decompose_reduction("compute", "i") if hasattr(s, "decompose_reduction") else None,
 "rfactor": lambda s: s.rfactor("i", 0) if hasattr(s, "rfactor") else None,
 "rfactor big": lambda s: s.rfactor("i", 5) if hasattr(s, "rfactor") else None,
 "tile empty": lambda s: s.tile([], []),
 "tile mismatch": lambda s: s.tile(["i"], [4, 4]),
 "tile neg": lambda s: s.tile(["i"], [-4]),
}
for fname, fn in [("f", f), ("g", g), ("mm", mm)]:
    for label, call in sch_calls.items():
        def go():
            s = pp.Schedule(fn)
            if fname == "mm":
                # rename loops: use the first loop
                pass
            call(s)
        t(f"{fname}:{label}", go)
for label, call in {"mm split k": lambda s: s.split("k", [None, 2**40]),
                    "mm rfactor": lambda s: s.rfactor("k", 5),
                    "mm rfactor neg": lambda s: s.rfactor("k", -1),
                    "mm decompose bad": lambda s: s.decompose_reduction("C", "zz"),
                    "mm decompose": lambda s: s.decompose_reduction("C", "k"),
                    "mm compute_at bad": lambda s: s.compute_at("C", "k"),
                    "mm blockize": lambda s: s.blockize("k") if hasattr(s, "blockize") else None,
                    "mm vectorize k": lambda s: s.vectorize("k"),
                    "mm parallel k": lambda s: s.parallel("k"),
                    "mm bind k": lambda s: s.bind("k", "threadIdx.x"),
                    "mm tile": lambda s: s.tile(["i", "j"], [4, 2**40]),
                    }.items():
    t(label, lambda: call(pp.Schedule(mm)))

# analyses
for label, call in {
    "touched bad buf": lambda: analyses.domain_touched(f, "Z"),
    "touched int": lambda: analyses.domain_touched(f, 3),
    "touched kind": lambda: analyses.domain_touched(f, "A", kind="rw"),
    "prove str": lambda: analyses.prove("x > 0", None),
    "prove int": lambda: analyses.prove(3, None),
    "prove none": lambda: analyses.prove(None, None),
    "prove bool": lambda: analyses.prove(True, None),
    "prove var": lambda: analyses.prove(n.Var("x", "int32"), None),
    "prove cmp": lambda: analyses.prove(n.Var("x", "int32") < 0, None),
    "prove cmp ctx": lambda: analyses.prove(n.Var("x", "int32") < 0, "junk"),
    "prove cmp ctx2": lambda: analyses.prove(n.Var("x", "int32") < 0, [3]),
    "prove float": lambda: analyses.prove(n.Var("x", "float32") < 0.0, None),
    "prove div0": lambda: analyses.prove((n.Var("x", "int32") // 0) < 0, None),
    "prove mod0": lambda: analyses.prove(n.FloorMod(n.Var("x", "int32"), n.IntImm(0)) < 0, None),
    "prove big": lambda: analyses.prove(n.Var("x", "int64") * n.IntImm(2**62, "int64") < 0, None),
    "crc none": lambda: analyses.can_remove_conditional(f, None),
    "crc int": lambda: analyses.can_remove_conditional(f, 3),
    "crc for": lambda: analyses.can_remove_conditional(f, f.body),
    "build bad target": lambda: codegen.build(f, target="cpu"),
    "build int target": lambda: codegen.build(f, target=3),
    "build None": lambda: codegen.build(None),
    "targets": lambda: codegen.targets(),
    "simplify None": lambda: pp.transform.simplify(None),
    "script None": lambda: pp.script(None),
    "script int": lambda: pp.script(3),
    "parse bytes": lambda: pp.parse(b"x"),
    "parse int": lambda: pp.parse(3),
    "structural": lambda: pp.structural_equal(f, 3),
    "structural none": lambda: pp.structural_equal(None, None),
    "assert_structural2": lambda: pp.assert_structural_equal(f, 3),
    "verify": lambda: pp.verify(3),
    "roc strict": lambda: pp.transform.remove_branching_through_overcompute(f, strict_ieee="yes"),
    "robr": lambda: pp.transform.remove_overcompute_through_branching(3),
    "Schedule int": lambda: pp.Schedule(3),
    "Schedule None": lambda: pp.Schedule(None),
    "trace apply": lambda: pp.Schedule(f).trace.apply_to(3),
    "trace apply g": lambda: (lambda s: (s.split("i", [None, 4]), s.trace.apply_to(g)))(pp.Schedule(f)),
    "trace apply mm": lambda: (lambda s: (s.split("i", [None, 4]), s.trace.apply_to(mm)))(pp.Schedule(f)),
    "autoschedule bad": lambda: pp.autoschedule(f, budget_s=-1),
    "autoschedule str": lambda: pp.autoschedule(f, budget_s="x"),
    "autoschedule seed": lambda: pp.autoschedule(f, budget_s=0.01, seed="x"),
}.items():
    t(label, call)

# kernel calls
kp = codegen.build(g, target="python")
kf = codegen.build(f, target="python")
for label, call in {
    "k py neg n": lambda: kp(-1, np.zeros(4, "float32"), np.zeros(4, "float32")),
    "k py big n": lambda: kp(2**40, np.zeros(4, "float32"), np.zeros(4, "float32")),
    "k py float n": lambda: kp(2.5, np.zeros(4, "float32"), np.zeros(4, "float32")),
    "k py str n": lambda: kp("4", np.zeros(4, "float32"), np.zeros(4, "float32")),
    "k py np n": lambda: kp(np.int64(4), np.zeros(4, "float32"), np.zeros(4, "float32")),
    "k py bool n": lambda: kp(True, np.zeros(4, "float32"), np.zeros(4, "float32")),
    "k py list": lambda: kp(4, [0.0] * 4, np.zeros(4, "float32")),
    "k py 2d": lambda: kp(4, np.zeros((2, 2), "float32"), np.zeros(4, "float32")),
    "k py f64": lambda: kp(4, np.zeros(4, "float64"), np.zeros(4, "float32")),
    "k py few": lambda: kp(4),
    "k py many": lambda: kp(4, 1, 2, 3),
    "k py nc": lambda: kp(4, np.zeros(8, "float32")[::2], np.zeros(4, "float32")),
    "k py ro": lambda: kp(4, np.zeros(4, "float32"), np.zeros(4, "float32").setflags(write=False)),
    "kf none": lambda: kf(None, None),
    "kf 0d": lambda: kf(np.float32(1), np.zeros(14, "float32")),
}.items():
    t(label, call)

# ---------------------------------------------------------------- odd programs
H = "@T.prim_func\ndef f("
progs = {
 "bool": H + "A: T.Buffer((8,), 'int32'), B: T.Buffer((8,), 'int32'), flag: T.bool):\n    for i in T.serial(8):\n        if flag:\n            B[i] = A[i] + 1\n        else:\n            B[i] = A[i]",
 "bool2": H + "A: T.Buffer((8,), 'int32'), B: T.Buffer((8,), 'int32'), flag: T.bool):\n    for i in T.serial(8):\n        B[i] = T.if_then_else(flag and i < 4, A[i], 0)",
 "uint": H + "A: T.Buffer((8,), 'int32'), n: T.uint32):\n    for i in T.serial(n):\n        A[i % T.uint32(8)] = 1",
 "uint8": H + "A: T.Buffer((300,), 'int32'), n: T.uint8):\n    for i in T.serial(n):\n        A[i + T.uint8(2)] = 1",
 "int8": H + "A: T.Buffer((300,), 'int32'), n: T.int8):\n    for i in T.serial(n):\n        A[T.max(i - T.int8(100), T.int8(0))] = 1",
 "int16mul": H + "A: T.Buffer((300,), 'int32'), n: T.int16):\n    for i, j in T.grid(n, 4):\n        A[(i * T.int16(300) + j) // T.int16(300)] = 1",
 "int64": H + "A: T.Buffer((8,), 'int32'), n: T.int64):\n    for i in T.serial(n):\n        A[i % T.int64(8)] = A[(i + T.int64(1)) % T.int64(8)]",
 "f16": H + "A: T.Buffer((8,), 'float16'), B: T.Buffer((8,), 'float16')):\n    for i in T.serial(8):\n        B[i] = A[i] * T.float16(65504.0) + T.float16(1.0)",
 "undef": H + "A: T.Buffer((8,), 'float32')):\n    for i in T.serial(8):\n        if i >= 6:\n            A[i] = T.undef()\n        else:\n            A[i] = 1.0",
 "assume": H + "A: T.Buffer((8,), 'float32'), n: T.int32):\n    T.assume(n // 3 == 2 and n % 4 == 0)\n    for i in T.serial(n):\n        A[i] = 1.0",
 "assume_false": H + "A: T.Buffer((8,), 'float32'), n: T.int32):\n    T.assume(n < 0 and n > 0)\n    for i in T.serial(n):\n        A[i] = 1.0",
 "empty": H + "A: T.Buffer((8,), 'float32')):\n    for i in T.serial(0):\n        A[i] = 1.0",
 "neg": H + "A: T.Buffer((8,), 'float32')):\n    for i in T.serial(-5):\n        A[i] = 1.0",
 "shift": H + "A: T.Buffer((8,), 'int32')):\n    for i in T.serial(8):\n        A[i] = (i << 2) >> 1",
 "bitand": H + "A: T.Buffer((8,), 'int32')):\n    for i in T.serial(8):\n        A[i & 7] = i | 1",
 "nested_div": H + "A: T.Buffer((8,), 'int32'), n: T.int32):\n    for i in T.serial(8):\n        A[i] = (n // (i + 1)) % 3",
 "div_by_param": H + "A: T.Buffer((8,), 'int32'), n: T.int32):\n    for i in T.serial(8):\n        A[i // n] = 1",
 "mod_neg": H + "A: T.Buffer((8,), 'int32')):\n    for i in T.serial(8):\n        A[i % -8 + 7] = 1",
 "select_idx": H + "A: T.Buffer((8,), 'int32'), B: T.Buffer((8,), 'int32')):\n    for i in T.serial(8):\n        A[T.if_then_else(B[i] > 0, i, 7 - i)] = 1",
 "data_loop": H + "A: T.Buffer((8,), 'int32'), B: T.Buffer((8,), 'int32')):\n    for i in T.serial(B[0]):\n        A[i] = 1",
 "vec": H + "A: T.Buffer((8,), 'float32'), B: T.Buffer((8,), 'float32')):\n    for i in T.serial(2):\n        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)]",
 "let": H + "A: T.Buffer((8,), 'int32')):\n    for i in T.serial(8):\n        x = i * 2\n        A[x // 2] = x",
 "while_like": H + "A: T.Buffer((8,), 'int32')):\n    for i in T.serial(8):\n        for j in T.serial(i):\n            A[j] = A[j] + i",
 "zero_shape": H + "A: T.Buffer((0,), 'int32')):\n    for i in T.serial(0):\n        A[i] = 1",
 "bigsym": H + "A: T.Buffer((n,), 'int32'), n: T.int64):\n    for i in T.serial(n):\n        A[i] = 1",
 "sym2": H + "a: T.handle, n: T.int32):\n    A = T.match_buffer(a, (n, n), 'float32')\n    for i, j in T.grid(n, n):\n        A[i, j] = A[j, i]",
 "reduce": H + "A: T.Buffer((8, 8), 'float32'), B: T.Buffer((8,), 'float32')):\n    for i, k in T.grid(8, 8):\n        with T.block('R'):\n            vi, vk = T.axis.remap('SR', [i, k])\n            with T.init():\n                B[vi] = 0.0\n            B[vi] = B[vi] + A[vi, vk]",
 "reduce_max": H + "A: T.Buffer((8, 8), 'float32'), B: T.Buffer((8,), 'float32')):\n    for i, k in T.grid(8, 8):\n        with T.block('R'):\n            vi, vk = T.axis.remap('SR', [i, k])\n            with T.init():\n                B[vi] = T.float32(-3.4e38)\n            B[vi] = T.max(B[vi], A[vi, vk])",
}
for name, text in progs.items():
    print("prog", name, flush=True)
    f = t(f"{name}:parse", lambda: pp.parse(text))
    if f is None:
        continue
    t(f"{name}:script", lambda: pp.assert_structural_equal(pp.parse(pp.script(f)), f))
    for bname in [p.name for p in f.params if isinstance(p, n.Buffer)]:
        for kind in ("read", "write"):
            t(f"{name}:touched {bname} {kind}", lambda: analyses.domain_touched(f, bname, kind=kind))
    t(f"{name}:dependences", lambda: analyses.dependences(f))
    t(f"{name}:check_bounds", lambda: analyses.check_bounds(f))
    t(f"{name}:precondition", lambda: analyses.bounds_precondition(f))
    t(f"{name}:is_no_op", lambda: [analyses.is_no_op(f, s) for s in walk(f.body) if isinstance(s, n.BufferStore)])
    for s in [x for x in walk(f.body) if isinstance(x, n.IfThenElse)]:
        t(f"{name}:crc", lambda: analyses.can_remove_conditional(f, s))
    for s in [x for x in walk(f.body) if isinstance(x, n.BufferStore)]:
        t(f"{name}:context_at", lambda: analyses.context_at(f, s))
    for p in ["simplify", "remove_branching_through_overcompute", "remove_overcompute_through_branching", "remove_no_op", "hoist_expression"]:
        fn = getattr(pp.transform, p, None)
        if fn:
            t(f"{name}:{p}", lambda: fn(f))
    t(f"{name}:build py", lambda: codegen.build(f, target="python"))
    loops = t(f"{name}:get_loops", lambda: pp.Schedule(f).get_loops()) or []
    for lp in loops:
        for prim, call in [("split", lambda s: s.split(lp, [None, 3])), ("split part", lambda s: s.split(lp, [None, 3], tail="partition")),
                           ("split pad", lambda s: s.split(lp, [None, 3], tail="pad")),
                           ("parallel", lambda s: s.parallel(lp)), ("vectorize", lambda s: s.vectorize(lp)), ("unroll", lambda s: s.unroll(lp)),
                           ("bind", lambda s: s.bind(lp, "threadIdx.x"))]:
            t(f"{name}:{prim} {lp}", lambda: call(pp.Schedule(f)))
        if len(loops) > 1:
            t(f"{name}:fuse", lambda: pp.Schedule(f).fuse(*loops[:2]))
            t(f"{name}:reorder", lambda: pp.Schedule(f).reorder(*loops[:2][::-1]))
    for bname in [p.name for p in f.params if isinstance(p, n.Buffer)]:
        for blk in [None] + [b.name for b in walk(f.body) if isinstance(b, n.Block)]:
            t(f"{name}:tl {bname}", lambda: pp.Schedule(f).transform_layout(blk, bname, lambda *ix: [ix[0] // 3, ix[0] % 3, *ix[1:]], pad_value=0))
            t(f"{name}:cache_read {bname}", lambda: pp.Schedule(f).cache_read(blk or "x", bname, "local"))

# ---------------------------------------------------------------- int64 extremes
M = 2**63 - 1
progs = {
 "max64": H + f"A: T.Buffer((8,), 'int32')):\n    for i in T.serial(T.int64({M})):\n        A[i % T.int64(8)] = 1",
 "max64b": H + f"A: T.Buffer((8,), 'int32'), n: T.int64):\n    for i in T.serial(n):\n        A[(i * T.int64({2**62})) % T.int64(8)] = 1",
 "max64c": H + "A: T.Buffer((8,), 'int32'), n: T.int64):\n    for i in T.serial(n, n + T.int64(4)):\n        A[i - n] = 1",
 "min64": H + f"A: T.Buffer((8,), 'int32'), n: T.int64):\n    for i in T.serial(T.int64({-2**63}), T.int64({-2**63 + 4})):\n        A[i + T.int64({2**63 - 1}) + T.int64(1)] = 1",
 "big shape": H + f"A: T.Buffer((T.int64({2**62}),), 'int32')):\n    for i in T.serial(T.int64(8)):\n        A[i * T.int64({2**59})] = 1",
 "big shape2": H + f"A: T.Buffer((T.int64({2**40}), T.int64({2**40})), 'int32')):\n    for i in T.serial(T.int64(8)):\n        A[i, i] = 1",
 "int32 edge": H + "A: T.Buffer((8,), 'int32'), n: T.int32):\n    for i in T.serial(n, n + 8):\n        A[i - n] = 1",
 "int32 edge2": H + "A: T.Buffer((8,), 'int32'), n: T.int32):\n    for i in T.serial(8):\n        A[(i + n) - n] = 1",
 "div big": H + f"A: T.Buffer((8,), 'int32'), n: T.int64):\n    for i in T.serial(8):\n        A[(n // T.int64({2**62}) + i) % T.int64(8)] = 1",
}
for name, text in progs.items():
    print("prog", name, flush=True)
    f = t(f"{name}:parse", lambda: pp.parse(text))
    if f is None:
        continue
    t(f"{name}:touched", lambda: analyses.domain_touched(f, "A"))
    t(f"{name}:dependences", lambda: analyses.dependences(f))
    t(f"{name}:check_bounds", lambda: analyses.check_bounds(f))
    t(f"{name}:precondition", lambda: analyses.bounds_precondition(f))
    t(f"{name}:simplify", lambda: pp.transform.simplify(f))
    t(f"{name}:build py", lambda: codegen.build(f, target="python"))
    loops = t(f"{name}:get_loops", lambda: pp.Schedule(f).get_loops()) or []
    for lp in loops:
        for fac in (3, 2**31, 2**40, 2**62):
            t(f"{name}:split {lp} {fac}", lambda: pp.Schedule(f).split(lp, [None, fac]))
            t(f"{name}:split part {lp} {fac}", lambda: pp.Schedule(f).split(lp, [None, fac], tail="partition"))
    for m in [lambda i: [i // 2**40, i % 2**40], lambda i: [i * 3], lambda *ix: [x // 7 for x in ix] + [x % 7 for x in ix]]:
        t(f"{name}:tl", lambda: pp.Schedule(f).transform_layout(None, "A", m, pad_value=0))
        t(f"{name}:im", lambda: (pp.IndexMap(m).padding_predicate(f.params[0].shape), pp.IndexMap(m).inverse(f.params[0].shape)))

print(len(leaks), "leaks")
for leak in leaks:
    print(leak)
