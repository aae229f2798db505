"""The machinery every primitive shares: install the result, record printable steps."""

from __future__ import annotations

import pytest

from polypad.errors import NotFoundError
from polypad.ir import nodes as ir
from polypad.ir.locate import find_block, replace
from polypad.ir.structural import assert_structural_equal
from polypad.layout import IndexMap
from polypad.schedule import Schedule, Step, Trace, primitive
from polypad.script import parse

TEXT = '''
@T.prim_func
def func(A: T.Buffer((14,), "float32")):
    with T.block("compute"):
        for i in T.serial(14):
            A[i] = 1.0
'''

MODULE = '''
@I.ir_module
class Module:
    @T.prim_func
    def first(A: T.Buffer((4,), "float32")):
        with T.block("a"):
            for i in T.serial(4):
                A[i] = 1.0

    @T.prim_func
    def second(A: T.Buffer((4,), "float32")):
        with T.block("b"):
            for i in T.serial(4):
                A[i] = 2.0
'''


class Renaming(Schedule):
    """A schedule with two toy primitives, one calling the other."""

    @primitive
    def rename_block(self, block, new_name):
        old = find_block(self.func, block)
        return replace(self.func, old, ir.Block(new_name, old.body)), new_name

    @primitive
    def rename_twice(self, block, first, second):
        self.rename_block(block, first)
        self.rename_block(first, second)
        return self.func

    @primitive
    def note_map(self, block, index_map):
        return self.func


def test_a_primitive_installs_its_result_and_records_its_step():
    f = parse(TEXT)
    sch = Renaming(f)
    assert sch.rename_block("compute", "work") == "work"
    assert find_block(sch.func, "work").body is find_block(f, "compute").body
    assert list(sch.trace) == [Step("rename_block", (("block", "compute"), ("new_name", "work")))]
    assert str(sch.trace) == "sch.rename_block(block='compute', new_name='work')"


def test_nested_primitives_are_not_recorded_again():
    sch = Renaming(parse(TEXT))
    sch.rename_twice("compute", "x", "y")
    assert [step.primitive for step in sch.trace] == ["rename_twice"]
    assert find_block(sch.func, "y").name == "y"


def test_index_maps_and_callables_are_recorded_as_lambda_text():
    sch = Renaming(parse(TEXT))
    sch.note_map("compute", lambda i: [i // 4, i % 4])
    sch.note_map("compute", IndexMap("lambda i: [i // 8, i % 8]"))
    texts = [dict(step.args)["index_map"] for step in sch.trace]
    assert texts == ["lambda i: [i // 4, i % 4]", "lambda i: [i // 8, i % 8]"]


def test_replay_on_the_original_gives_the_same_function():
    f = parse(TEXT)
    sch = Renaming(f)
    sch.rename_block("compute", "work")
    sch.rename_twice("work", "x", "done")
    replayed = Renaming(f).replay(Trace(sch.trace))
    assert_structural_equal(replayed.func, sch.func)
    assert find_block(replayed.func, "done").name == "done"


def test_a_module_schedule_works_on_one_function_at_a_time():
    mod = parse(MODULE)
    sch = Renaming(mod)
    assert sch.func.name == "first"
    sch.work_on("second")
    sch.rename_block("b", "c")
    assert [f.name for f in sch.mod.funcs] == ["first", "second"]
    assert find_block(sch.mod["second"], "c").name == "c"
    assert sch.mod["first"] is mod["first"]
    assert str(sch.trace).splitlines()[0] == "sch.work_on(name='second')"
    with pytest.raises(NotFoundError, match="no function 'third'; functions: first, second"):
        sch.work_on("third")


def test_apply_to_replays_on_a_plain_schedule():
    sch = Schedule(parse(TEXT))
    assert len(Trace().apply_to(sch.func).trace) == 0
    with pytest.raises(NotFoundError, match="Schedule has no primitive 'rename_block'"):
        Trace([Step("rename_block", (("block", "compute"), ("new_name", "w")))]).apply_to(sch.func)


def test_schedule_refuses_what_is_not_a_function():
    with pytest.raises(TypeError, match="PrimFunc or an IRModule, not str"):
        Schedule("def f(): pass")
