"""Unsupported script is a ParseError at the exact file, line and column."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from polypad.errors import ParseError
from polypad.script import parse

HEADER = '@T.prim_func\ndef f(A: T.Buffer((4,), "int32"), B: T.Buffer((4, 4), "float32")):\n'


def body_error(body: str) -> ParseError:
    """Parse ``body`` (indented by the caller) inside ``f``; return the error."""
    with pytest.raises(ParseError) as info:
        parse(HEADER + body, "kernel.py")
    return info.value


# (function body, line, column, message fragment); lines count the 2-line header.
CASES = [
    ("    while A[0] < 3:\n        pass\n", 3, 5, "while loop is not supported"),
    ("    A[0] = foo(3)\n", 3, 12, "unknown function 'foo'"),
    ("    A[0] = np.exp(1.0)\n", 3, 12, "only calls of T.<function>"),
    ("    import math\n", 3, 5, "an import is not supported"),
    ("    f = lambda v: v\n", 3, 9, "a lambda is not supported"),
    ("    x = T.var('int32')\n", 3, 9, "T.var is not supported"),
    ("    A[0] = T.ramp(0, 1, 4)\n", 3, 12, "T.ramp is not supported"),
    ('    C = T.alloc_buffer((4,), "float32x4")\n', 3, 30, "vector dtype 'float32x4'"),
    ("    A[0] = missing + 1\n", 3, 12, "undefined name 'missing'"),
    ("    A[0] = A[0] ** 2\n", 3, 12, "'**' is not supported; use T.pow"),
    ("    for i in T.serial(4):\n        for j in T.serial(4):\n"
     "            B[i, j] = B[j, i] & 1\n", 5, 23, "T.bitwise_and takes integers, not float32"),
    ("    for i in T.serial(4):\n        for j in T.serial(4):\n"
     "            B[i, j] = B[i, k]\n", 5, 28, "undefined name 'k'"),
    ("    A[0] = 1 if A[1] > 0 else 2\n", 3, 12, "use T.if_then_else"),
    ("    A[0] = B[0, 0]\n", 3, 12, "cannot store a float32 value in the int32 buffer A"),
    ("    A[0] = 0.5\n", 3, 12, "0.5 as an int32"),
    ("    A[0, 1] = 2\n", 3, 5, "buffer A has 1 dimension but is indexed with 2"),
    ("    A[0] = A\n", 3, 12, "buffer 'A' is used as a value"),
    ("    for i in T.serial(4.0):\n        pass\n", 3, 23, "must be an integer"),
    ("    for i in T.serial(4):\n        pass\n    else:\n        pass\n", 3, 5,
     "for ... else"),
    ("    for i in items:\n        pass\n", 3, 14, "a loop must iterate over"),
    ("    for i, j in T.grid(4):\n        pass\n", 3, 5, "T.grid has 1 extents"),
    ("    with open('f'):\n        pass\n", 3, 10, 'with T.block("name")'),
    ("    if A[0]:\n        pass\n", 3, 8, "a condition must be bool, not int32"),
    ("    A[0] = A[1:2]\n", 3, 14, "a slice is not supported"),
    ("    a, b = 1, 2\n", 3, 5, "tuple assignment is not supported"),
    ("    return\n", 3, 5, "return needs a value"),
    ("    A[0] = T.min(1)\n", 3, 12, "T.min needs the argument 'b'"),
    ("    A[0] = T.undef(kind=3)\n", 3, 20, "T.undef has no argument 'kind'"),
    ("    A[0] = A[0] is A[1]\n", 3, 12, "'is' is not supported"),
    ("    x = T.match_buffer(a, (4,))\n", 3, 24, "must be a T.handle parameter"),
    ("    for i in T.serial(4):\n        X = T.match_buffer(a, (4,))\n", 4, 13,
     "T.match_buffer must stand at the top level of the function body, or in a block"),
    ("    A[0] = = 1\n", 3, 12, "invalid syntax"),
    ("    for i, i in T.grid(2, 2):\n        pass\n", 3, 12, "T.grid binds 'i' twice"),
    ("    A = T.alloc_buffer((4,), 'int32')\n", 3, 5, "buffer name 'A' is already in use"),
]


@pytest.mark.parametrize("body, line, col, fragment", CASES)
def test_error_location(body, line, col, fragment):
    err = body_error(body)
    assert (err.filename, err.lineno, err.col) == ("kernel.py", line, col), str(err)
    assert fragment in err.message, str(err)


def test_error_text_shows_the_line_and_a_caret():
    err = body_error("    for i in T.serial(4):\n        A[i] = nope\n")
    assert str(err) == (
        "kernel.py:4:16: undefined name 'nope'\n"
        "            A[i] = nope\n"
        "                   ^"
    )
    assert isinstance(err, SyntaxError) and err.offset == 16


@pytest.mark.parametrize("text, line, col, fragment", [
    ("x = 3\n", 1, 1, "not supported at the top level"),
    ("", 1, 1, "no @T.prim_func function found"),
    ("@T.prim_func\ndef f(A):\n    pass\n", 2, 7, "needs an annotation"),
    ("@T.prim_func\ndef f(A: int):\n    pass\n", 2, 10, "unsupported parameter annotation"),
    ("@T.prim_func\ndef f(A: T.Buffer((n,), 'int32')):\n    pass\n", 2, 20,
     "undefined name 'n'"),
    ("@T.prim_func\ndef f(n: T.int32) -> int:\n    pass\n", 2, 22,
     "returns nothing (-> None) or a scalar (-> T.int32)"),
    ("@T.prim_func\ndef f(n: T.int32 = 3):\n    pass\n", 2, 1, "plain positional"),
    ("@jit\ndef f():\n    pass\n", 1, 2, "unsupported decorator"),
    ("@T.prim_func\ndef f():\n    pass\n@T.prim_func\ndef f():\n    pass\n", 5, 1,
     "defined twice"),
    ("@I.ir_module\nclass M:\n    x = 1\n", 3, 5, "not supported in an ir_module class"),
    ("@T.prim_func\ndef f(n: T.int32):\n    n = n + T.int32x4(1)\n", 3, 13, "vector dtype"),
])
def test_function_level_errors(text, line, col, fragment):
    with pytest.raises(ParseError) as info:
        parse(text, "m.py")
    err = info.value
    assert (err.lineno, err.col) == (line, col), str(err)
    assert fragment in err.message, str(err)


def test_decorator_error_names_the_real_file(tmp_path):
    path = tmp_path / "user_kernel.py"
    path.write_text(textwrap.dedent("""\
        from polypad.script import T


        def build():
            @T.prim_func
            def bad(A: T.Buffer((4,), "float32")):
                for i in T.serial(4):
                    while i < 3:
                        pass

            return bad
    """))
    spec = importlib.util.spec_from_file_location("user_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(ParseError) as info:
        module.build()
    err = info.value
    assert (err.filename, err.lineno, err.col) == (str(path), 8, 13)
    assert err.text == "            while i < 3:"
    assert "while loop" in err.message
