"""The layout primitives in a trace: every argument prints as text and replays.

Index maps (callables, ``IndexMap`` objects, text) and pad values (numbers,
``T.undef()``, callables, text) are recorded as text that the primitives
accept, so ``str(sch.trace)`` is runnable Python and ``trace.apply_to(f)``
rebuilds the same function.
"""

from __future__ import annotations

import pytest
from layout_support import load

from polypad import AXIS_SEPARATOR, IndexMap, Schedule, T
from polypad.ir.structural import assert_structural_equal

ARGS = "transform_layout_args_before"


def b_buffer():
    return load(ARGS).params[1]


CASES = [
    # (index map, pad value for B, how the pad value prints)
    (lambda i: [i // 4, i % 4], None, "None"),
    ("lambda i: [i // 4, i % 4]", -2, "-2"),
    (IndexMap(lambda i: [i // 4, i % 4]), 0.5, "0.5"),
    (lambda i: [i // 4, i % 4], T.undef(), "'T.undef()'"),
    (lambda i: [i // 4, i % 4], T.undef(dtype="float32"), "'T.undef()'"),
    (lambda i: [i // 4, i % 4], T.float32(3), "'3.0'"),
    (lambda i: [i // 4, i % 4], lambda io, ii: T.undef(), "'lambda io, ii: T.undef()'"),
    (lambda i: [i // 4, i % 4], lambda io, ii: 1.5, "'lambda io, ii: 1.5'"),
    (lambda i: [i // 4, i % 4], lambda io, ii: None, "'lambda io, ii: None'"),
    (lambda i: [i // 4, i % 4], lambda io, ii: b_buffer()[io, 0], "'lambda io, ii: B[io, 0]'"),
    (lambda i: [i // 4, i % 4], "lambda io, ii: B[io, 0] + 1.0",
     "'lambda io, ii: B[io, 0] + 1.0'"),
    (lambda i: [(i + 2) // 8, AXIS_SEPARATOR, (i + 2) % 8], 0,
     "0"),
]


@pytest.mark.parametrize("index_map, pad_value, printed", CASES)
def test_a_transform_prints_and_replays(index_map, pad_value, printed):
    f = load(ARGS)
    sch = Schedule(f)
    sch.transform_layout("compute", "A", lambda i: [i // 4, i % 4], pad_value=-1.0)
    sch.transform_layout("compute", "B", index_map, pad_value=pad_value)
    lines = str(sch.trace).splitlines()
    assert lines[0] == ("sch.transform_layout(block='compute', buffer='A', "
                        "index_map='lambda i: [i // 4, i % 4]', pad_value=-1.0)")
    assert lines[1].endswith(f", pad_value={printed})")
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)
    # The printed trace is Python that rebuilds the function.
    replay = Schedule(f)
    exec(str(sch.trace), {"sch": replay})
    assert_structural_equal(replay.func, sch.func)


def test_an_axis_separator_prints_by_name():
    sch = Schedule(load(ARGS))
    sch.transform_layout(None, "B", lambda i: [i // 4, AXIS_SEPARATOR, i % 4])
    assert str(sch.trace) == ("sch.transform_layout(block=None, buffer='B', "
                              "index_map='lambda i: [i // 4, AXIS_SEPARATOR, i % 4]', "
                              "pad_value=None)")
    assert sch.trace.apply_to(load(ARGS)).func.params[1].axis_separators == (1,)


def test_cache_stages_print_and_replay_with_the_steps_that_use_them():
    f = load(ARGS)
    sch = Schedule(f)
    sch.cache_read("compute", f.params[0], "local")
    sch.cache_write("compute", "B", name="out")
    sch.transform_layout("compute", "A_local", lambda i: [i // 4, i % 4], pad_value=T.undef())
    sch.transform_layout("compute", "out", lambda i: [i // 4, i % 4], pad_value=-2.0)
    assert str(sch.trace) == "\n".join([
        "sch.cache_read(block='compute', buffer='A', scope='local', name=None)",
        "sch.cache_write(block='compute', buffer='B', scope='global', name='out')",
        "sch.transform_layout(block='compute', buffer='A_local', "
        "index_map='lambda i: [i // 4, i % 4]', pad_value='T.undef()')",
        "sch.transform_layout(block='compute', buffer='out', "
        "index_map='lambda i: [i // 4, i % 4]', pad_value=-2.0)",
    ])
    assert_structural_equal(sch.trace.apply_to(f).func, sch.func)


def test_a_module_trace_replays_per_function():
    mod = load("explicit_default_step0")
    sch = Schedule(mod)
    sch.work_on("producer")
    sch.transform_layout(None, "A", lambda i: [i // 4, i % 4], pad_value=0)
    sch.work_on("consumer")
    sch.transform_layout(None, "A", "lambda i: [i // 4, i % 4]", pad_value=0)
    assert [step.primitive for step in sch.trace] == [
        "work_on", "transform_layout", "work_on", "transform_layout"]
    assert_structural_equal(sch.trace.apply_to(mod).mod, sch.mod)
