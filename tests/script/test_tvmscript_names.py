"""Names the script syntax reads itself: ``T`` everywhere, ``I`` only outside functions.

A buffer's name is part of a function's interface (``structural_equal``
compares it), so the printer keeps it wherever the text allows.  Inside a
function only ``T.`` is read: a buffer or variable named ``I`` keeps its
name, in a lone prim_func and in an ``@I.ir_module`` alike.  ``T`` is the
namespace every function reads, so a buffer named ``T`` prints as ``T_``
and reads back under that name: the one buffer name that does not survive
the round trip.
"""

from __future__ import annotations

import textwrap

from tvmscript_support import roundtrip

from polypad.ir.nodes import Buffer, BufferStore, FloatImm, For, ForKind, IntImm, PrimFunc, Var
from polypad.ir.structural import first_mismatch, structural_equal
from polypad.script import parse, script

COPY = """
@T.prim_func
def f(I: T.Buffer((4,), "float32"), O: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        O[i] = I[i]
"""


def test_a_buffer_named_I_round_trips():
    f = roundtrip(COPY)
    assert [p.name for p in f.params] == ["I", "O"]
    assert script(f, spelling="tir") == COPY.lstrip()
    assert script(f) == COPY.lstrip().replace("@T.prim_func", "@T.prim_func(s_tir=True)")


def test_variables_and_allocations_named_I_keep_their_name():
    f = roundtrip("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            I = T.alloc_buffer((4,), "float32")
            for I_1 in T.serial(4):
                I[I_1] = A[I_1]
                A[I_1] = I[I_1] * 2.0
        """)
    assert "I = T.alloc_buffer" in script(f)


MODULE = """
@I.ir_module
class Module:
    @T.prim_func
    def f(I: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            I[i] = 0.0

    @T.prim_func
    def g(A: T.Buffer((4,), "float32"), I: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            I[i] = A[i]
"""


def test_a_buffer_named_I_in_an_ir_module_round_trips():
    mod = parse(MODULE)
    printed = script(mod)
    assert printed == MODULE.lstrip().replace("@T.prim_func", "@T.prim_func(s_tir=True)")
    assert structural_equal(parse(printed), mod)
    assert script(mod, spelling="tir") == MODULE.lstrip()


def test_a_module_named_I_is_still_renamed():
    mod = parse(MODULE.replace("class Module", "class I"))
    assert script(mod).splitlines()[:2] == ["@I.ir_module", "class I_:"]


def test_a_buffer_named_T_prints_as_T_and_does_not_round_trip():
    b = Buffer("T", (4,), "float32")
    i = Var("i", "int32")
    f = PrimFunc("f", (b,), For(i, IntImm(0, "int32"), IntImm(4, "int32"), ForKind.SERIAL,
                                BufferStore(b, FloatImm(0.0, "float32"), (i,))))
    printed = script(f)
    assert printed == textwrap.dedent("""\
        @T.prim_func(s_tir=True)
        def f(T_: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                T_[i] = 0.0
        """)
    again = parse(printed)
    assert again.params[0].name == "T_"
    assert first_mismatch(again, f).path.endswith("params[0]")
