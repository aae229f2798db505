"""``polypad.script`` is both the front end's package and the printer ``pp.script(f)``."""

from __future__ import annotations

import importlib

import polypad as pp

TEXT = '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.serial(4):
        A[i] = T.float32(0)
'''


def test_the_package_prints_when_called():
    f = pp.parse(TEXT)
    assert pp.script(f) == pp.script.printer.script(f)
    assert pp.script(f, spelling="tir").startswith("@T.prim_func\ndef f(")
    assert pp.structural_equal(pp.parse(pp.script(f)), f)


def test_submodules_import_through_the_package_attribute():
    import polypad.script.printer as printer  # failed while the attribute was the function

    assert printer is importlib.import_module("polypad.script.printer")
    assert pp.script.parser.parse is pp.parse
