"""The index of primitives (polypad.schedule.primitives) matches the code and the docs.

Every primitive method of ``Schedule`` has an entry and every entry a
method of its family; every check, decider and rewrite an entry names
exists; the arguments are checked as the entry declares; the table in
docs/architecture.md is the index's; and the schedule package has no import
circle (imports inside functions counted too).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from polypad.errors import ArgumentTypeError, ArgumentValueError
from polypad.schedule import PRIMITIVES, Schedule
from polypad.schedule.primitives import Each, OneOf, resolve
from polypad.script import parse

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "polypad" / "schedule"

F = parse('''
@T.prim_func
def func(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    with T.block("compute"):
        for i, j in T.grid(8, 8):
            B[i, j] = A[i, j] * 2.0
''')


def _primitive_methods() -> dict[str, object]:
    return {name: getattr(Schedule, name) for name in dir(Schedule)
            if getattr(getattr(Schedule, name), "is_primitive", False)}


def test_every_primitive_has_an_entry_and_every_entry_a_method_of_its_family():
    methods = _primitive_methods()
    assert sorted(methods) == sorted(PRIMITIVES)
    for name, entry in PRIMITIVES.items():
        assert methods[name].__module__ == f"polypad.schedule.{entry.family}_primitives", name


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_an_entry_checks_parameters_of_its_method_and_every_reference(name):
    entry = PRIMITIVES[name]
    params = list(inspect.signature(getattr(Schedule, name)).parameters)[1:]
    checked = [check.param for check in entry.takes]
    assert set(checked) <= set(params)
    # What the decorator checks by name for a method with no entry, the entry checks too.
    assert {"block", "buffer", "loop", "loop_a", "loop_b"} & set(params) <= set(checked)


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_check_decider_and_rewrite_of_an_entry_exists(name):
    entry = PRIMITIVES[name]
    for path in (*entry.checks, *([entry.rewrite] if entry.rewrite else [])):
        assert callable(resolve(path)), path
    assert (entry.rewrite is None) == bool(entry.via)
    assert set(entry.via) <= set(PRIMITIVES)
    assert entry.legal and entry.legal[0].islower() and not entry.legal.endswith(".")


# Arguments of the right type for every parameter a primitive has, so that only the
# one under test is wrong.
_GOOD = {
    "block": "compute", "buffer": "A", "loop": "i", "loop_a": "i", "loop_b": "j",
    "factors": [None, 2], "tail": "predicate", "loops": ["i", "j"], "factor_axis": 0,
    "scope": "global", "name": None, "at": None, "statements": [0], "new_block": None,
    "position": "before", "band": "{ compute[i, j] -> [i] }", "names": None,
    "reassociate": False, "strict_ieee": False, "index_map": "lambda i, j: [j, i]",
    "pad_value": None, "thread": "threadIdx.x", "through_registers": False, "alignment": 16,
}


def _call(name: str, arguments: dict):
    method = getattr(Schedule(F), name)
    params = inspect.signature(method).parameters
    star = [p for p in params.values() if p.kind is inspect.Parameter.VAR_POSITIONAL]
    if star:
        return method(*arguments[star[0].name])
    return method(**{p: arguments[p] for p in params})


@pytest.mark.parametrize("name, k", [(name, k) for name, entry in sorted(PRIMITIVES.items())
                                     for k in range(len(entry.takes))])
def test_the_decorator_runs_the_checks_the_entry_declares(name, k):
    check = PRIMITIVES[name].takes[k]
    arguments = dict(_GOOD)
    if isinstance(check, OneOf):
        arguments[check.param], error = "nonsense", ArgumentValueError
    elif isinstance(check, Each):
        arguments[check.param], error = ["i", 3.5], ArgumentTypeError
    else:
        arguments[check.param], error = 3.5, ArgumentTypeError
    with pytest.raises(error, match=rf"^Schedule\.{name}: (parameter )?{check.param} "):
        _call(name, arguments)


# ---------------------------------------------------------------- the docs


def _short(path: str) -> str:
    return path.removeprefix("polypad.schedule.")


def index_table() -> list[str]:
    """The rows docs/architecture.md shows for the index."""
    rows = []
    for name, entry in PRIMITIVES.items():
        checks = ", ".join(f"`{_short(p)}`" for p in entry.checks) or "—"
        rewrite = (f"`{_short(entry.rewrite)}`" if entry.rewrite
                   else "applies " + ", ".join(f"`{v}`" for v in entry.via))
        rows.append(f"| `{name}` | {entry.family} | {entry.legal} | {checks} | {rewrite} |")
    return rows


def test_the_architecture_docs_list_every_primitive_as_the_index_does():
    text = (ROOT / "docs" / "architecture.md").read_text()
    header = "| primitive | family | legal when | checked by | rewrite |"
    assert header in text
    lines = text[text.index(header):].splitlines()[2:]
    shown = lines[:next(k for k, line in enumerate(lines) if not line.startswith("|"))]
    assert shown == index_table()


# ---------------------------------------------------------------- no import circle


def _imports(path: Path, module: str) -> set[str]:
    """The polypad.schedule modules ``path`` imports, anywhere in it (functions too).
    ``from . import x`` imports the package itself first: it counts as the package."""
    package = "polypad.schedule"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(package):
                    out.add(alias.name)
            continue
        else:
            continue
        if target == package or target.startswith(package + "."):
            out.add(target)
    out.discard(module)
    return out


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(PACKAGE.glob("*.py")):
        module = "polypad.schedule" + ("" if path.stem == "__init__" else f".{path.stem}")
        graph[module] = _imports(path, module)
    return graph


def test_submodules_import_their_siblings_never_the_package():
    graph = _graph()
    importers = sorted(m for m, targets in graph.items()
                       if m != "polypad.schedule" and "polypad.schedule" in targets)
    assert importers == []


def test_the_schedule_package_has_no_import_circle():
    graph = _graph()
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[module] = 2
        path.pop()
        return None

    for module in graph:
        if module not in state:
            circle = visit(module)
            assert circle is None, " -> ".join(circle)
