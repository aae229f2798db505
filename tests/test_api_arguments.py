"""The public API checks its arguments at the front door.

A wrong type is an :class:`ArgumentTypeError` (a ``TypeError``) naming the
function and the parameter; a value outside a fixed set is an
:class:`ArgumentValueError` (a ``ValueError``) listing the accepted ones; a
block, buffer, loop or function name that is not there is a
:class:`NotFoundError` listing the names that are.  Nothing leaks from deep
inside as an ``AttributeError`` or a bare ``KeyError``.
"""

from __future__ import annotations

import numpy as np
import pytest

import analyses
import codegen
import polypad as pp
from polypad import arguments, budget
from polypad import transform as tr
from polypad.errors import (
    ArgumentTypeError,
    ArgumentValueError,
    BuildArgumentError,
    BuildError,
    NotFoundError,
    PolypadError,
)
from polypad.ir import nodes as n
from polypad.ir.visitor import walk

F = pp.parse('''
@T.prim_func
def fill(A: T.Buffer((14,), "int32"), B: T.Buffer((14,), "int32")):
    with T.block("compute"):
        for i in T.serial(14):
            if i < 10:
                A[i] = i
    for j in T.serial(14):
        B[j] = A[j]
''')
MOD = pp.parse('''
@T.prim_func
def first(A: T.Buffer((4,), "int32")):
    A[0] = 1

@T.prim_func
def second(A: T.Buffer((4,), "int32")):
    A[0] = 2
''')
STORE = next(x for x in walk(F.body) if isinstance(x, n.BufferStore))
M = pp.IndexMap(lambda i: [i // 4, i % 4])


def sch() -> pp.Schedule:
    return pp.Schedule(F)


T_ERR, V_ERR, NF = ArgumentTypeError, ArgumentValueError, NotFoundError

# (call, error class, fragment of the message)
CASES = {
    # -- script front end and structural equality
    "parse(None)": (lambda: pp.parse(None), T_ERR,
                    "parse: parameter text takes a str, not NoneType"),
    "parse(bytes)": (lambda: pp.parse(b"x"), T_ERR, "parameter text takes a str, not bytes"),
    "parse(filename=3)": (lambda: pp.parse("", filename=3), T_ERR, "parameter filename"),
    "script(None)": (lambda: pp.script(None), T_ERR, "script: parameter node takes a PrimFunc"),
    "script(text)": (lambda: pp.script("def f(): pass"), T_ERR, "not str 'def f(): pass'"),
    "prim_func(3)": (lambda: pp.prim_func(3), T_ERR, "prim_func: parameter fn takes a function"),
    "ir_module(f)": (lambda: pp.ir_module(F), T_ERR, "ir_module: parameter cls takes a class"),
    "structural_equal(f, text)": (lambda: pp.structural_equal(F, "fill"), T_ERR,
                                  "structural_equal: parameter b takes an IR node"),
    "assert_structural_equal(3, f)": (lambda: pp.assert_structural_equal(3, F), T_ERR,
                                      "assert_structural_equal: parameter a takes an IR node"),
    "verify(None)": (lambda: pp.verify(None), T_ERR, "verify: parameter node takes a PrimFunc"),
    "module[unknown]": (lambda: MOD["third"], NF,
                        "no function 'third' in module 'module'; functions: first, second"),
    # -- index maps
    "IndexMap(None)": (lambda: pp.IndexMap(None), T_ERR, "IndexMap: parameter fn takes a callable"),
    "IndexMap(names=str)": (lambda: pp.IndexMap(lambda i: [i], names="i"), T_ERR,
                            "parameter names"),
    "transformed_shape(14)": (lambda: M.transformed_shape(14), T_ERR,
                              "IndexMap.transformed_shape: parameter shape takes a tuple of "
                              "extents"),
    "padding_predicate(None)": (lambda: M.padding_predicate(None), T_ERR,
                                "IndexMap.padding_predicate: parameter shape"),
    "padding_set(('a',))": (lambda: M.padding_set(("a",)), T_ERR, "not str 'a'"),
    "inverse(None)": (lambda: M.inverse(None), T_ERR, "IndexMap.inverse: parameter shape"),
    "is_injective(None)": (lambda: M.is_injective(None), T_ERR, "IndexMap.is_injective"),
    "is_bijective(None)": (lambda: M.is_bijective(None), T_ERR, "IndexMap.is_bijective"),
    "physical_shape(3)": (lambda: M.physical_shape(3), T_ERR, "IndexMap.physical_shape"),
    "pack(None)": (lambda: M.pack(None), T_ERR, "IndexMap.pack: parameter array takes an array"),
    "unpack(a, None)": (lambda: M.unpack(np.zeros((4, 4)), None), T_ERR,
                        "IndexMap.unpack: parameter shape"),
    "then(3)": (lambda: M.then(3), T_ERR, "IndexMap.then: parameter other takes an IndexMap"),
    "map('i')": (lambda: M("i"), T_ERR, "parameter indices takes ints or expressions"),
    # -- schedules: types, then names
    "Schedule(None)": (lambda: pp.Schedule(None), T_ERR,
                       "Schedule: parameter func_or_mod takes a PrimFunc or an IRModule"),
    "Schedule(text)": (lambda: pp.Schedule("fill"), T_ERR, "not str 'fill'"),
    "Schedule(preserve_interface=1)": (lambda: pp.Schedule(F, preserve_interface="yes"), T_ERR,
                                       "parameter preserve_interface takes a bool"),
    "transform_layout(block=3)": (lambda: sch().transform_layout(3, "A", M), T_ERR,
                                  "Schedule.transform_layout: parameter block takes a block name"),
    "transform_layout(buffer=None)": (lambda: sch().transform_layout("compute", None, M), T_ERR,
                                      "Schedule.transform_layout: parameter buffer takes a "
                                      "buffer name"),
    "transform_layout(index_map=3)": (lambda: sch().transform_layout("compute", "A", 3), T_ERR,
                                      "index_map must be an IndexMap, a callable or lambda text"),
    "transform_layout(unknown block)": (lambda: sch().transform_layout("nope", "A", M), NF,
                                        "no block 'nope' in function fill; blocks: 'compute'"),
    "transform_layout(unknown buffer)": (lambda: sch().transform_layout("compute", "Z", M), NF,
                                         "no buffer 'Z' in function fill; buffers: A, B"),
    "cache_read(scope=None)": (lambda: sch().cache_read("compute", "A", None), T_ERR,
                               "Schedule.cache_read: parameter scope takes a str"),
    "cache_read(unknown buffer)": (lambda: sch().cache_read("compute", "Z"), NF,
                                   "buffers: A, B"),
    "cache_write(name=3)": (lambda: sch().cache_write("compute", "A", name=3), T_ERR,
                            "Schedule.cache_write: parameter name"),
    "cache_write(unknown block)": (lambda: sch().cache_write("nope", "A"), NF, "blocks: 'compute'"),
    "sequential_buffer_access(buffer=3)": (lambda: sch().sequential_buffer_access("compute", 3),
                                           T_ERR, "Schedule.sequential_buffer_access: parameter "
                                           "buffer"),
    "sequential_buffer_access(unknown)": (lambda: sch().sequential_buffer_access("nope", "A"), NF,
                                          "no block 'nope'"),
    "distribute(statements=None)": (lambda: sch().distribute("compute", None), T_ERR,
                                    "Schedule.distribute: parameter statements"),
    "distribute(position)": (lambda: sch().distribute(None, [0], position="middle"), V_ERR,
                             "position must be one of 'before' or 'after', not 'middle'"),
    "distribute(unknown statement)": (lambda: sch().distribute(None, ["nope"]), NF,
                                      "no statement 'nope' in the function body; statements:"),
    "reorder_by_map(band=3)": (lambda: sch().reorder_by_map("compute", 3), T_ERR,
                               "Schedule.reorder_by_map: parameter band takes an ISL map"),
    "reorder_by_map(names=str)": (lambda: sch().reorder_by_map("compute", "{ compute[i] -> [i] }",
                                                               "io"),
                                  T_ERR, "parameter names takes a tuple of loop names"),
    "merge_adjacent_loops(3, 4)": (lambda: sch().merge_adjacent_loops(3, 4), T_ERR,
                                   "Schedule.merge_adjacent_loops: parameter loop_a takes a loop"),
    "merge_adjacent_loops(unknown)": (lambda: sch().merge_adjacent_loops("i", "k"), NF,
                                      "no loop over 'k' in function fill; loops over: i, j"),
    "work_on(3)": (lambda: sch().work_on(3), T_ERR, "Schedule.work_on: parameter name"),
    "work_on(unknown)": (lambda: pp.Schedule(MOD).work_on("third"), NF,
                         "functions: first, second"),
    # -- passes: the function in the pass decorator, options in each pass
    "simplify(None)": (lambda: tr.simplify(None), T_ERR,
                       "simplify: parameter func takes a PrimFunc, not NoneType"),
    "simplify(module)": (lambda: tr.simplify(MOD), T_ERR, "not IRModule"),
    "simplify(budget='1')": (lambda: tr.simplify(F, budget="1"), T_ERR,
                             "simplify: parameter budget takes a number of seconds"),
    "simplify(budget=0)": (lambda: tr.simplify(F, budget=0), V_ERR,
                           "simplify: budget must be a positive number of seconds, not 0"),
    "remove_no_op(None)": (lambda: tr.remove_no_op(None), T_ERR, "remove_no_op: parameter func"),
    "hoist_expression(None)": (lambda: tr.hoist_expression(None), T_ERR, "hoist_expression"),
    "hoist_expression(conditionals=str)": (lambda: tr.hoist_expression(F, conditionals="all"),
                                           T_ERR, "parameter conditionals takes a "
                                           "HoistedConditionals"),
    "hoist_expression(let_bindings=int)": (lambda: tr.hoist_expression(F, let_bindings=1), T_ERR,
                                           "parameter let_bindings takes a HoistedLetBindings"),
    "reduce_loop_extents(None)": (lambda: tr.reduce_loop_extents(None), T_ERR,
                                  "reduce_loop_extents: parameter func"),
    "remove_assume(None)": (lambda: tr.remove_assume(None), T_ERR, "remove_assume"),
    "remove_store_undef(None)": (lambda: tr.remove_store_undef(None), T_ERR,
                                 "remove_store_undef"),
    "remove_branching_through_overcompute(None)": (
        lambda: tr.remove_branching_through_overcompute(None), T_ERR,
        "remove_branching_through_overcompute: parameter func"),
    "remove_branching_through_overcompute(block=3)": (
        lambda: tr.remove_branching_through_overcompute(F, block=3), T_ERR,
        "remove_branching_through_overcompute: parameter block takes a block name"),
    "remove_branching_through_overcompute(unknown block)": (
        lambda: tr.remove_branching_through_overcompute(F, block="nope"), NF, "no block 'nope'"),
    "explain_branching_through_overcompute(text)": (
        lambda: tr.explain_branching_through_overcompute("fill"), T_ERR,
        "explain_branching_through_overcompute: parameter func"),
    "explain_branching_through_overcompute(budget=-1)": (
        lambda: tr.explain_branching_through_overcompute(F, budget=-1), V_ERR,
        "budget must be a positive number"),
    # -- analyses: f in the decider decorators, the rest in each analysis
    "domain_touched(None)": (lambda: analyses.domain_touched(None, "A"), T_ERR,
                             "domain_touched: parameter f_or_stmt takes a PrimFunc or a Stmt"),
    "domain_touched(buffer=3)": (lambda: analyses.domain_touched(F, 3), T_ERR,
                                 "domain_touched: parameter buffer takes a Buffer or a buffer "
                                 "name"),
    "domain_touched(kind)": (lambda: analyses.domain_touched(F, "A", "readwrite"), V_ERR,
                             "domain_touched: kind must be one of 'read', 'write' or 'any', "
                             "not 'readwrite'"),
    "domain_touched(unknown buffer)": (lambda: analyses.domain_touched(F, "Z"), NF,
                                       "no buffer 'Z' in fill; buffers: A, B"),
    "dependences(None)": (lambda: analyses.dependences(None), T_ERR,
                          "dependences: parameter f takes a PrimFunc"),
    "dependences(f=None)": (lambda: analyses.dependences(f=None), T_ERR,
                            "dependences: parameter f"),
    "can_merge_loops(None)": (lambda: analyses.can_merge_loops(None, "i", "j"), T_ERR,
                              "can_merge_loops: parameter f takes a PrimFunc"),
    "can_merge_loops(loop_b=4)": (lambda: analyses.can_merge_loops(F, "i", 4), T_ERR,
                                  "can_merge_loops: parameter loop_b takes a loop variable name"),
    "can_merge_loops(unknown)": (lambda: analyses.can_merge_loops(F, "x", "j"), NF,
                                 "no loop over 'x' in function fill; loops over: i, j"),
    "is_no_op(None)": (lambda: analyses.is_no_op(None, "compute"), T_ERR,
                       "is_no_op: parameter f takes a PrimFunc"),
    "is_no_op(stmt=3)": (lambda: analyses.is_no_op(F, 3), T_ERR,
                         "is_no_op: parameter stmt takes a statement of f or a block name"),
    "is_no_op(unknown block)": (lambda: analyses.is_no_op(F, "nope"), NF, "blocks: 'compute'"),
    "prove(None)": (lambda: analyses.prove(None), T_ERR, "prove: parameter cond takes a condition"),
    "prove(text)": (lambda: analyses.prove("i < 4"), T_ERR, "not str 'i < 4'"),
    "prove(context=3)": (lambda: analyses.prove(True, 3), T_ERR,
                         "prove: parameter context takes a Context"),
    "prove(int expression)": (lambda: analyses.prove(n.Var("i") + 1), T_ERR,
                              "prove: parameter cond needs a condition"),
    "context_at(None)": (lambda: analyses.context_at(None, STORE), T_ERR,
                         "context_at: parameter f takes a PrimFunc"),
    "context_at(stmt=name)": (lambda: analyses.context_at(F, "compute"), T_ERR,
                              "context_at: parameter stmt takes a statement (Stmt) of f"),
    "check_bounds(text)": (lambda: analyses.check_bounds("fill"), T_ERR,
                           "check_bounds: parameter f takes a PrimFunc, not str 'fill'"),
    "check_bounds(budget=list)": (lambda: analyses.check_bounds(F, budget=[1]), T_ERR,
                                  "check_bounds: parameter budget"),
    "can_remove_conditional(None)": (lambda: analyses.can_remove_conditional(None, "compute"),
                                     T_ERR, "can_remove_conditional: parameter f"),
    "can_remove_conditional(stmt=3)": (lambda: analyses.can_remove_conditional(F, 3), T_ERR,
                                       "can_remove_conditional: parameter stmt takes an "
                                       "IfThenElse"),
    "can_remove_conditional(unknown)": (lambda: analyses.can_remove_conditional(F, "nope"), NF,
                                        "no block 'nope' in function fill"),
    # -- codegen: a BuildError too
    "build(None)": (lambda: codegen.build(None), BuildArgumentError,
                    "codegen.build: codegen builds a PrimFunc, not NoneType (parameter func)"),
    "build(module)": (lambda: codegen.build(MOD), BuildArgumentError,
                      "pick one function out of an IRModule with module['name']"),
    "build(target=3)": (lambda: codegen.build(F, target=3), BuildArgumentError,
                        "codegen.build: parameter target takes a str"),
    "build(target=opencl)": (lambda: codegen.build(F, target="opencl"), BuildError,
                             "unknown target 'opencl'; choose one of numba, python, cuda"),
    "lower(text)": (lambda: codegen.lower("fill"), BuildArgumentError, "codegen.lower"),
    # -- budgets
    "set_default_budget(None)": (lambda: budget.set_default_budget(None), T_ERR,
                                 "set_default_budget: parameter seconds takes a number"),
    "set_default_budget(-1)": (lambda: budget.set_default_budget(-1), V_ERR,
                               "must be a positive number of seconds, not -1"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_wrong_argument_fails_at_the_front_door(name):
    call, error, fragment = CASES[name]
    with pytest.raises(error) as caught:
        call()
    assert fragment in str(caught.value)


def test_the_argument_errors_are_python_errors_and_polypad_errors():
    assert issubclass(ArgumentTypeError, TypeError) and issubclass(ArgumentTypeError, PolypadError)
    assert issubclass(ArgumentValueError, ValueError)
    assert issubclass(ArgumentValueError, PolypadError)
    assert issubclass(BuildArgumentError, BuildError)
    assert issubclass(BuildArgumentError, ArgumentTypeError)
    assert issubclass(NotFoundError, LookupError)


def test_right_arguments_still_work():
    assert pp.structural_equal(F, F) and pp.structural_equal(None, None)
    assert pp.structural_equal((F,), (F,))
    assert M.transformed_shape([14]) == (4, 4)
    assert M.transformed_shape((np.int64(14),)) == (4, 4)
    assert M.pack([1.0, 2.0, 3.0, 4.0]).shape == (1, 4)
    assert tr.simplify(F, budget=5) is not None
    assert analyses.domain_touched(F, "A", kind="write").exact
    assert analyses.prove(True)


def test_the_helpers_describe_what_they_take():
    assert arguments.describe((n.PrimFunc, None)) == "a PrimFunc or None"
    assert arguments.describe((n.IfThenElse, str, int)) == "an IfThenElse, a str or an int"
    assert arguments.got("x" * 100) == "str"
    with pytest.raises(ArgumentTypeError, match="takes an int, not bool True"):
        arguments.expect(True, int, "count", "f")
    assert arguments.expect(True, (bool, int), "flag", "f") is True
    assert arguments.expect_budget(None, "f") is None


PASSES = [name for name in tr.__all__
          if callable(getattr(tr, name)) and not isinstance(getattr(tr, name), type)]
ANALYSES = [name for name in analyses.__all__
            if callable(getattr(analyses, name)) and not isinstance(getattr(analyses, name), type)]


@pytest.mark.parametrize("name", PASSES)
def test_every_pass_checks_its_function(name):
    with pytest.raises(ArgumentTypeError, match=rf"^{name}: parameter func takes a PrimFunc"):
        getattr(tr, name)(None)


@pytest.mark.parametrize("name", ANALYSES)
def test_every_analysis_checks_its_first_argument(name):
    with pytest.raises(ArgumentTypeError, match=rf"^{name}: parameter \w+ takes "):
        getattr(analyses, name)(None, None)
