"""The ``polypad`` command line (also ``python -m polypad``).

    polypad check FILE.py [--func NAME]   buffers, instance domains, accesses
    polypad build FILE.py [--func NAME]   the Numba kernel's Python source
    polypad remove-branching FILE.py [--func NAME] [--strict-ieee]
                                          the function with every removable
                                          conditional removed, and why
    polypad tune FILE.py [--func NAME] [--budget S] [--log F] [--scheduler ADDRESS]
                                          search a fast legal schedule (autoschedule)
    polypad build FILE.py --log F         the kernel of the best logged schedule
    polypad demo [--rows R --cols C]      row_summation end to end, timed

``check`` and ``build`` read at most :data:`MAX_INPUT_BYTES` of FILE, decode it
as Python source (a UTF-8 byte order mark or a coding cookie is honoured) and
parse it with ``ast``; they never import or run it.

Every failure ends as a message on stderr, one line except a parse error's
source line and caret, and one of the exit codes in :data:`EXIT_CODES`; an
unexpected exception is reported as an internal error, with the traceback only
under ``--traceback``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import textwrap
import tokenize
import traceback
from typing import TYPE_CHECKING

from polypad._version import __version__
from polypad.errors import ParseError, PolypadError

if TYPE_CHECKING:
    from polypad.ir import Buffer, PrimFunc

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_REFUSED: "polypad refused the kernel: a parse, dtype, analysis or build error "
                  "(the message names the file, line and column where it can), or the "
                  "demo's result check failed",
    EXIT_USAGE: "bad command line, or an input file polypad will not read: missing, a "
                "directory, unreadable, not text, empty, over 10 MiB, or without the "
                "function named by --func",
    EXIT_INTERNAL: "internal error, a bug in polypad: run again with --traceback and "
                   "report it",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "standard output was closed early (piped into head, say); nothing more "
                      "is printed",
}

MAX_INPUT_BYTES = 10 * 1024 * 1024
"""``check`` and ``build`` refuse a larger file (kernels are a few kilobytes)."""

MAX_DEMO_ELEMENTS = 1 << 28
"""The demo's ``rows * cols`` bound: 1 GiB of float32, and int32 indices."""

_DESCRIPTION = """\
Exact polyhedral and constraint analysis for padded buffer layouts.

check and build read a kernel file as text and parse it with Python's ast
module; they never import or run it."""


class _BadInput(Exception):
    """An input file or --func name the CLI refuses; main() turns it into
    EXIT_USAGE and one line on stderr.  It never leaves this module."""


def _epilog() -> str:
    lines = ["exit codes:"]
    for code, meaning in EXIT_CODES.items():
        lines.append(textwrap.fill(meaning, width=79, initial_indent=f"  {code:<5}",
                                   subsequent_indent=" " * 7))
    return "\n".join(lines)


def _read_source(path: str) -> str:
    """The text of the kernel file ``path``, decoded as Python source.

    Reads at most ``MAX_INPUT_BYTES + 1`` bytes, so a device such as
    ``/dev/zero`` is refused quickly.  Raises ``_BadInput`` (exit code 2) for a
    missing, unreadable, binary, empty or oversized file, or a directory.
    """
    if os.path.isdir(path):
        raise _BadInput(f"{path} is a directory, not a kernel file")
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_INPUT_BYTES + 1)
    except OSError as err:
        raise _BadInput(f"cannot read {path}: {err.strerror or err}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise _BadInput(f"{path} is larger than {MAX_INPUT_BYTES >> 20} MiB; "
                        "is it really a kernel file?")
    if b"\0" in data:
        raise _BadInput(f"{path} is a binary file (it holds NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        if err.msg.startswith("encoding problem"):
            raise _BadInput(f"{path} starts with a UTF-8 byte order mark but its coding "
                            "line names another encoding") from None
        if not err.msg.startswith("invalid or missing encoding"):
            raise _BadInput(f"{path}: {err.msg}") from None  # a coding line naming no codec
        encoding = "utf-8"  # the first lines are not UTF-8: decoding says where
    try:
        text = data.decode(encoding)  # "utf-8-sig" drops a byte order mark
    except UnicodeDecodeError as err:
        name = "UTF-8" if encoding.startswith("utf-8") else encoding
        raise _BadInput(f"{path} is not {name} text (byte {data[err.start]:#04x} at "
                        f"offset {err.start}); is it a binary file?") from None
    if not text.strip():
        raise _BadInput(f"{path} is empty; expected @T.prim_func functions")
    return text


def _load(path: str, func_name: str | None) -> list[PrimFunc]:
    from polypad.ir import IRModule
    from polypad.script import parse

    parsed = parse(_read_source(path), filename=path)
    funcs = list(parsed.funcs) if isinstance(parsed, IRModule) else [parsed]
    if func_name is not None:
        chosen = [f for f in funcs if f.name == func_name]
        if not chosen:
            names = ", ".join(f.name for f in funcs)
            raise _BadInput(f"{path} has no function named {func_name!r}; it has: {names}")
        funcs = chosen
    return funcs


def describe_buffers(func: PrimFunc) -> list[str]:
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


def _buffer_line(buffer: Buffer) -> str:
    dims = ", ".join(str(getattr(d, "name", d)) for d in buffer.shape)
    extra = f", axis_separators={list(buffer.axis_separators)}" if buffer.axis_separators else ""
    return f"{buffer.name}[{dims}]: {buffer.dtype}{extra}"


def check(args: argparse.Namespace) -> int:
    """Print each function's buffers, statement domains, access relations,
    whether every access stays inside its buffer (``analyses.check_bounds``)
    and for which parameter values (``analyses.bounds_precondition``)."""
    from analyses import Unknown, bounds_precondition, check_bounds
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
        print(f"bounds: {check_bounds(func)}")
        found = bounds_precondition(func)
        if isinstance(found, Unknown):
            print(f"precondition: {found}")
        else:
            print(f"precondition: {script(found.condition).strip()}")
        print("conditionals:")
        print("\n".join(describe_conditionals(func)) or "  none")
        print()
    return EXIT_OK


def describe_conditionals(func: PrimFunc, *, strict_ieee: bool = False) -> list[str]:
    """One line per ``if`` of ``func``: may it be removed (``analyses.can_remove_conditional``)?"""
    from analyses import Proved, Refuted, can_remove_conditional
    from analyses.conditional import Removable
    from polypad.ir.nodes import IfThenElse
    from polypad.ir.show import show
    from polypad.ir.visitor import walk

    lines = []
    for stmt in walk(func.body):
        if not isinstance(stmt, IfThenElse):
            continue
        decided = can_remove_conditional(func, stmt, strict_ieee=strict_ieee)
        if isinstance(decided, Removable):
            verdict = f"removable, keeping {decided.kept_what()}: {decided.detail}"
        elif isinstance(decided, Proved):
            verdict = f"removable: {decided.detail}"
        elif isinstance(decided, Refuted):
            verdict = f"must stay: {decided.counterexample}"
        else:
            verdict = f"undecided: {decided.reason}"
        where = f"line {stmt.span.line}: " if stmt.span is not None else ""
        lines.append(_one_line(f"  {where}if {show(stmt.condition)}: {verdict}", 400))
    return lines


def remove_branching(args: argparse.Namespace) -> int:
    """Print each function with its removable conditionals removed, and a line per
    conditional saying whether it went and why."""
    from polypad.script import script
    from polypad.transform import explain_branching_through_overcompute

    for func in _load(args.file, args.func):
        report = explain_branching_through_overcompute(func, strict_ieee=args.strict_ieee)
        for entry in report.entries:
            print(_one_line(f"# {entry}", 400))
        print(script(report.func))
    return EXIT_OK


def build(args: argparse.Namespace) -> int:
    """Print the Numba kernel source of each function; with ``--log``, of the best
    schedule logged for it (``polypad tune``)."""
    import codegen

    for func in _load(args.file, args.func):
        if args.log is not None:
            from polypad.tuner import best_logged

            sch = best_logged(func, args.log)
            if sch is None:
                raise _BadInput(f"{args.log} holds no schedule of {func.name}; run "
                                f"polypad tune {args.file} --log {args.log} first")
            print(f"# function {func.name}, schedule {sch.tuning.best_key} from {args.log}")
            for line in str(sch.trace).splitlines():
                print(f"#   {line}")
            func = sch.func
        else:
            print(f"# function {func.name}")
        print(codegen.build(func).source)
    return EXIT_OK


def tune(args: argparse.Namespace) -> int:
    """Search a schedule of each function (``polypad.autoschedule``), with a progress
    line on stderr; print the best schedule's trace and time."""
    from polypad.tuner import autoschedule

    client = None
    if args.scheduler is not None:
        try:
            from distributed import Client
        except ImportError:
            raise _BadInput("--scheduler needs Dask: pip install 'polypad[distributed]'"
                            ) from None
        client = Client(args.scheduler)
    try:
        for func in _load(args.file, args.func):
            sch = autoschedule(func, budget_s=args.budget, log=args.log, seed=args.seed,
                               client=client, workers=args.workers, progress=_progress(),
                               max_candidates=args.max_candidates)
            print(file=sys.stderr)
            print(f"# function {func.name}")
            for line in sch.tuning.summary().splitlines():
                print(f"# {line}")
            print(str(sch.trace) or "# the plain nest: no step")
    finally:
        if client is not None:
            client.close()
    return EXIT_OK


def _progress():
    """A progress line on stderr: a bar of candidates tried, the best so far."""
    tty = sys.stderr.isatty()

    def show(tuning) -> None:
        from polypad.tuner.report import seconds_text

        tried = len(tuning.tried)
        width = 24
        filled = int(width * tried / tuning.space) if tuning.space else width
        best = (f"best {seconds_text(tuning.best_seconds)} ({tuning.best_key})"
                if tuning.best_seconds else "no time yet")
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {tried}/{tuning.space} tried, "
                f"{tuning.measured} timed, {best}")
        print(("\r" + line) if tty else line, end="" if tty else "\n", file=sys.stderr,
              flush=True)

    return show


def demo(args: argparse.Namespace) -> int:
    """Run the bundled row_summation example end to end."""
    from polypad.demo import run_demo

    if args.rows * args.cols > MAX_DEMO_ELEMENTS:
        raise _BadInput(f"--rows * --cols is {args.rows * args.cols}; the demo allows at "
                        f"most {MAX_DEMO_ELEMENTS}")
    return run_demo(rows=args.rows, cols=args.cols, repeat=args.repeat)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``polypad``, with a help text for every command."""
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(prog="polypad", description=_DESCRIPTION,
                                     epilog=_epilog(), formatter_class=formatter)
    parser.add_argument("--version", action="version", version=f"polypad {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = (
        ("check", check, "print buffers, instance domains and access relations",
         "Print each function's buffers, the instance domain and the read and write\n"
         "access relations of each statement (isl notation), and the schedule."),
        ("build", build, "print the generated Numba kernel source",
         "Print the Python source of the Numba kernel generated for each function."),
        ("remove-branching", remove_branching,
         "remove the conditionals that overcompute makes unnecessary",
         "Print each function with every conditional removed that polypad proves\n"
         "unnecessary (its body is a no-op where the condition fails, or both\n"
         "branches do the same there), preceded by one comment line per conditional\n"
         "saying whether it went, and the proof or the counterexample."),
    )
    for name, handler, summary, description in commands:
        p = sub.add_parser(name, help=summary, epilog=_epilog(), formatter_class=formatter,
                           description=description + "\nFILE is read as text and never "
                                                     "imported or run.")
        p.add_argument("file", metavar="FILE", help="a kernel file of @T.prim_func functions "
                                                    "or one @I.ir_module class")
        p.add_argument("--func", metavar="NAME", default=None,
                       help="only the function NAME (default: every function)")
        if name == "build":
            p.add_argument("--log", metavar="F", default=None,
                           help="emit the kernel of the best schedule in the tuning log F "
                                "(written by polypad tune)")
        if name == "remove-branching":
            p.add_argument("--strict-ieee", action="store_true",
                           help="compare floats as IEEE values, bit for bit (0 * inf is "
                                "NaN), not as reals")
        p.set_defaults(handler=handler)
    p = sub.add_parser("tune", help="search a fast legal schedule (autoschedule)",
                       epilog=_epilog(), formatter_class=formatter,
                       description="Search the schedules of each function, built from the\n"
                                   "legality-checked primitives, checked against the reference\n"
                                   "executor and timed; print the best one's trace.  FILE is\n"
                                   "read as text and never imported or run.")
    p.add_argument("file", metavar="FILE", help="a kernel file of @T.prim_func functions")
    p.add_argument("--func", metavar="NAME", default=None,
                   help="only the function NAME (default: every function)")
    p.add_argument("--budget", metavar="S", type=float, default=60.0,
                   help="seconds of search per function (default 60)")
    p.add_argument("--log", metavar="F", default=None,
                   help="the tuning log (JSON lines): resumed, appended, reused")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="compile and time on the Dask cluster of this scheduler")
    p.add_argument("--seed", type=int, default=0, help="the order of the search (default 0)")
    p.add_argument("--workers", type=int, default=None,
                   help="local compile processes (default: one per core; 0: none)")
    p.add_argument("--max-candidates", metavar="N", type=_positive_int, default=None,
                   help="stop after trying N candidates (besides the budget)")
    p.set_defaults(handler=tune)
    p = sub.add_parser("demo", help="row_summation end to end: parse, model, Numba, timing",
                       epilog=_epilog(), formatter_class=formatter,
                       description="Take the bundled row_summation example through parse,\n"
                                   "print, the isl model and the Numba kernel, then time it\n"
                                   "against numpy's a.sum(axis=1).")
    p.add_argument("--rows", type=_positive_int, default=4096, help="rows of A (default 4096)")
    p.add_argument("--cols", type=_positive_int, default=4094,
                   help="columns of A (default 4094)")
    p.add_argument("--repeat", type=_positive_int, default=5,
                   help="timed runs; the best is shown (default 5)")
    p.set_defaults(handler=demo)
    for command_parser in sub.choices.values():
        command_parser.add_argument("--traceback", action="store_true",
                            help="on an internal error, print the Python traceback")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``polypad`` console script; returns the exit code.

    >>> main(["check", "kernel.py", "--func", "scale"])  # doctest: +SKIP
    0
    """
    for stream in (sys.stdout, sys.stderr):
        try:  # a kernel's non-ASCII names must not fail on an ASCII terminal
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    try:
        code = _run(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader went away (`polypad check k.py | head`).  Point stdout at
        # devnull so the interpreter's final flush does not fail again.
        _detach_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("polypad: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # --help, --version, or a usage error already printed
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE
    try:
        return args.handler(args)
    except ParseError as err:
        print(f"polypad: {err}", file=sys.stderr)  # location, source line and caret
        return EXIT_REFUSED
    except PolypadError as err:
        print(f"polypad: {type(err).__name__}: {_one_line(str(err))}", file=sys.stderr)
        return EXIT_REFUSED
    except _BadInput as err:
        print(f"polypad: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise
    except Exception as err:  # the last line of defence: no raw traceback
        if args.traceback:
            traceback.print_exc()
        hint = (" (is an expression in the kernel nested very deeply?)"
                if isinstance(err, RecursionError) else "")
        print(f"polypad: internal error: {type(err).__name__}: {_one_line(str(err), 300)}"
              f"{hint}; this is a bug in polypad: run again with --traceback and report it",
              file=sys.stderr)
        return EXIT_INTERNAL


def _one_line(text: str, limit: int | None = None) -> str:
    line = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if limit is not None and len(line) > limit:
        line = line[:limit] + " ..."
    return line


def _detach_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
