"""``Schedule(f, preserve_interface=True)``: parameters keep their layout.

RFC 0077 review: a function transformed in isolation must not change its
interface.  Transforming a parameter is refused with a pointer to the cache
stages; transforming a cache of it is allowed.
"""

from __future__ import annotations

import pytest
from layout_support import load

from analyses.evidence import Counterexample
from polypad import IllegalTransformError, Schedule
from polypad.ir.structural import assert_structural_equal
from polypad.schedule.interface import is_parameter

SPLIT4 = "lambda i: [i // 4, i % 4]"


@pytest.mark.parametrize("buffer", ["A", "B"])
def test_transforming_a_parameter_is_refused_when_the_interface_is_kept(buffer):
    f = load("transform_layout_args_before")
    sch = Schedule(f, preserve_interface=True)
    with pytest.raises(IllegalTransformError) as err:
        sch.transform_layout("compute", buffer, SPLIT4, pad_value=0.0)
    message = str(err.value)
    assert message.startswith(f"transform_layout would change the interface of func: {buffer} "
                              "is a parameter")
    assert f"sch.cache_read(block, '{buffer}')" in message
    assert f"sch.cache_write(block, '{buffer}')" in message
    evidence = err.value.evidence
    assert isinstance(evidence, Counterexample)
    assert evidence.description == (f"{buffer} is a parameter of func; its layout is part of "
                                    "the interface")
    assert sch.func is f and len(sch.trace) == 0


def test_the_cache_route_keeps_the_interface():
    f = load("transform_layout_args_before")
    sch = Schedule(f, preserve_interface=True)
    a_cache = sch.cache_read("compute", "A")
    b_cache = sch.cache_write("compute", "B")
    sch.transform_layout("compute", a_cache, SPLIT4, pad_value=-1.0)
    sch.transform_layout("compute", b_cache, SPLIT4, pad_value=-2.0)
    assert_structural_equal(sch.func, load("transform_layout_cache_after"))
    assert sch.func.params == f.params  # the very same parameter buffers
    replayed = sch.trace.apply_to(f, preserve_interface=True)
    assert_structural_equal(replayed.func, sch.func)


def test_without_the_flag_a_parameter_may_change():
    sch = Schedule(load("transform_layout_args_before"))
    sch.transform_layout("compute", "A", SPLIT4)
    assert sch.func.params[0].shape == (4, 4)


def test_is_parameter_tells_parameters_from_allocations():
    f = load("transform_layout_cache_before")
    assert is_parameter(f, f.params[0])
    assert not is_parameter(f, f.body.buffer)
