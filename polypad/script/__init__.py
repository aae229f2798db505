"""The script front end: Python-syntax text <-> IR.

``parse(text)`` reads script text (with :mod:`ast`; nothing is executed),
``script(node)`` prints it back, ``@prim_func`` / ``@ir_module`` parse a
decorated definition's source, and ``T`` is the namespace the text uses.
"""

import sys
import types

from ..ir.show import register_printer
from .decorators import ir_module, prim_func
from .namespace import I, T
from .parser import parse
from .printer import script

# The IR prints nodes in messages through the printer this layer registers,
# so that the IR never imports upward (polypad/ir/show.py).
register_printer(script)

__all__ = ["I", "T", "ir_module", "parse", "prim_func", "script"]


class _ScriptModule(types.ModuleType):
    """This package, callable as its printer.

    ``pp.script(f)`` prints ``f``, and ``polypad.script`` is also this package: were
    the package attribute the function, ``import polypad.script.printer as m`` would
    fail, since Python looks the submodule up on the attribute it finds."""

    def __call__(self, node, *args, **kwargs) -> str:
        """Print ``node`` as script text: :func:`polypad.script.printer.script`."""
        return script(node, *args, **kwargs)


sys.modules[__name__].__class__ = _ScriptModule
