"""The script front end: Python-syntax text <-> IR.

``parse(text)`` reads script text (with :mod:`ast`; nothing is executed),
``script(node)`` prints it back, ``@prim_func`` / ``@ir_module`` parse a
decorated definition's source, and ``T`` is the namespace the text uses.
"""

from ..ir.show import register_printer
from .decorators import ir_module, prim_func
from .namespace import I, T
from .parser import parse
from .printer import script

# The IR prints nodes in messages through the printer this layer registers,
# so that the IR never imports upward (polypad/ir/show.py).
register_printer(script)

__all__ = ["I", "T", "ir_module", "parse", "prim_func", "script"]
