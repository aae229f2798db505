"""The ``polypad`` command line.

    polypad check FILE.py [--func NAME]   buffers, instance domains, accesses
    polypad build FILE.py [--func NAME]   the Numba kernel's Python source
    polypad demo [--rows R --cols C]      row_summation end to end, timed

``check`` and ``build`` read FILE's text and parse it with ``ast``; they never
import or run it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from polypad.errors import PolypadError


def _load(path: str, func_name: str | None):
    from polypad.ir import IRModule
    from polypad.script import parse

    try:
        text = Path(path).read_text()
    except OSError as err:
        raise SystemExit(f"polypad: cannot read {path}: {err.strerror}") from None
    parsed = parse(text, filename=path)
    funcs = list(parsed.funcs) if isinstance(parsed, IRModule) else [parsed]
    if func_name is not None:
        funcs = [f for f in funcs if f.name == func_name]
        if not funcs:
            raise SystemExit(f"polypad: {path} has no function named {func_name!r}")
    return funcs


def describe_buffers(func) -> list[str]:
    """One line per buffer of ``func``: name, shape, dtype, where it comes from."""
    from polypad.ir import Allocate, Buffer, walk

    lines = []
    for param in func.params:
        if isinstance(param, Buffer):
            lines.append(f"  {_buffer_line(param)}  (parameter)")
        else:
            lines.append(f"  {param.name}: {param.dtype}  (scalar parameter)")
    for node in walk(func.body):
        if isinstance(node, Allocate):
            lines.append(f"  {_buffer_line(node.buffer)}  (allocated)")
    return lines


def _buffer_line(buffer) -> str:
    dims = ", ".join(str(getattr(d, "name", d)) for d in buffer.shape)
    extra = f", axis_separators={list(buffer.axis_separators)}" if buffer.axis_separators else ""
    return f"{buffer.name}[{dims}]: {buffer.dtype}{extra}"


def check(args) -> int:
    """Print each function's buffers, statement domains and access relations."""
    from polypad.model import extract
    from polypad.script import script

    for func in _load(args.file, args.func):
        print(f"function {func.name}")
        print("buffers:")
        print("\n".join(describe_buffers(func)))
        model = extract(func)
        print("statements:")
        for st in model.statements:
            dropped = ", ".join(script(g).strip() for g in st.dropped_guards)
            flag = f"  (may: guard {dropped} not modelled)" if st.may else ""
            print(f"  {st.name}: {script(st.stmt).strip().splitlines()[0]}{flag}")
            print(f"    domain: {st.domain}")
            print(f"    reads:  {st.reads}")
            print(f"    writes: {st.writes}")
        print(f"schedule: {model.schedule}")
        print()
    return 0


def build(args) -> int:
    """Print the Numba kernel source of each function."""
    import codegen

    for func in _load(args.file, args.func):
        print(f"# function {func.name}")
        print(codegen.build(func).source)
    return 0


def demo(args) -> int:
    """Run the bundled row_summation example end to end."""
    from polypad.demo import run_demo

    return run_demo(rows=args.rows, cols=args.cols, repeat=args.repeat)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``polypad`` console script."""
    parser = argparse.ArgumentParser(prog="polypad", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, handler, help_text in (("check", check, "print domains and accesses"),
                                     ("build", build, "print the Numba kernel source")):
        p = sub.add_parser(name, help=help_text)
        p.add_argument("file")
        p.add_argument("--func", default=None, help="only this function")
        p.set_defaults(handler=handler)
    p = sub.add_parser("demo", help="row_summation: parse, model, Numba kernel, timing")
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--cols", type=int, default=4094)
    p.add_argument("--repeat", type=int, default=5)
    p.set_defaults(handler=demo)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except PolypadError as err:
        print(f"polypad: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
