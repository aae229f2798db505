"""The layers of docs/architecture.md hold for every import, and no modules import
one another in a circle.

Every import counts, wherever it stands: at module level, inside a function
(an import deferred to call time is still a dependency, only a later one),
under ``if TYPE_CHECKING:``, and ``importlib.import_module`` with a constant
name.  An import of ``polypad.ir.nodes`` also runs ``polypad/ir/__init__.py``;
that edge to the package counts too (the importer's own packages excepted,
whose ``__init__`` is already running), except the one to ``polypad``, the
front door.  Relative imports are resolved; ``from polypad.ir import nodes``
is an edge to the module ``polypad.ir.nodes``, ``from polypad.ir import Var``
one to the package ``polypad.ir``.

Two rules, each with an explicit allow-list the tests print:

- no module imports a module of a lower row of the layer table (the rows
  are listed top to bottom; a module imports from its own row and the rows
  above it);
- no strongly connected component of more than one module.

Nothing else is let through: there is no list of known violations.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "scripts"))
# The circles of a graph: Tarjan's algorithm, kept once, in the script that prints it.
from import_graph import cycles  # noqa: E402

#: The packages whose modules make the graph; imports of anything else are left out.
PACKAGES = ("polypad", "analyses", "codegen")
FRONT_DOOR = "polypad"

# The rows of the layer table of docs/architecture.md, top to bottom; a module may
# import only from its own row and the rows above it.
LAYERS = [
    ("support", ["polypad.errors", "polypad.arguments", "polypad.budget", "polypad.concurrency",
                 "polypad.durations", "polypad._version"]),
    ("IR", ["polypad.ir"]),
    ("script", ["polypad.script"]),
    ("model", ["polypad.model"]),
    ("layout", ["polypad.layout"]),
    ("semantics", ["polypad.semantics"]),
    ("analyses", ["analyses"]),
    ("transform", ["polypad.transform"]),
    ("schedule", ["polypad.schedule"]),
    ("codegen", ["codegen"]),
    ("tuner", ["polypad.tuner"]),
    ("faces", ["polypad.cli", "polypad.demo", "polypad.__main__", "polypad.examples",
               "polypad.viz", "polypad.tvm"]),
]

@dataclass(frozen=True, order=True)
class Edge:
    """``source`` imports ``target`` at ``line`` of ``path``.

    ``function`` names the function the import stands in (None at module level);
    ``implied`` marks the edge to a package whose ``__init__`` the import runs.
    """

    source: str
    target: str
    path: str
    line: int
    function: str | None = None
    implied: bool = False

    def __str__(self) -> str:
        where = f" in {self.function}()" if self.function else ""
        how = ", implied" if self.implied else ""
        return f"{self.source} -> {self.target}  [{self.path}:{self.line}{where}{how}]"


# ---------------------------------------------------------------- reading the imports


def module_name(path: Path) -> str:
    """The dotted name of the module in ``path`` (a package's ``__init__.py`` is the
    package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of :data:`PACKAGES`, by dotted name."""
    return {module_name(path): path
            for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def _absolute(name: str, level: int, module: str, is_package: bool) -> str:
    """``name`` imported with ``level`` leading dots from ``module``, made absolute."""
    if not level:
        return name
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".")
    parts = parts[:len(parts) - level + 1]
    return ".".join(parts + ([name] if name else []))


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """``name``, or the longest of its prefixes that is a known module."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _import_module_name(call: ast.Call, module: str, is_package: bool) -> str | None:
    """The module ``importlib.import_module(name[, package])`` imports, where ``name``
    is a constant (and ``package`` ``__name__`` or ``__package__``); else None."""
    func = call.func
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module")
    if not named or not call.args:
        return None
    first = call.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    name = first.value
    level = len(name) - len(name.lstrip("."))
    if not level:
        return name
    # import_module(".x", __name__) is relative to the module itself, as to a package.
    by_name = len(call.args) > 1 and isinstance(call.args[1], ast.Name) \
        and call.args[1].id == "__name__"
    return _absolute(name[level:], level, module, is_package or by_name)


def _is_import_module(node: ast.AST) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module")


def _statements(tree: ast.AST):
    """Every import statement and ``import_module`` call of ``tree``, with the name of
    the function it stands in (None at module level)."""
    stack: list[tuple[ast.AST, str | None]] = [(tree, None)]
    while stack:
        node, function = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_import_module(node):
            yield node, function
        inner = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            else function
        stack += [(child, inner) for child in ast.iter_child_nodes(node)]


def edges(known: dict[str, Path] | None = None) -> tuple[list[Edge], list[str]]:
    """Every import edge between the modules of :data:`PACKAGES` (see the module
    docstring), and the ``import_module`` calls whose name is not a constant."""
    known = modules() if known is None else known
    found: set[Edge] = set()
    unread: list[str] = []
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        rel = str(path.relative_to(ROOT))
        for node, function in _statements(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node.module or "", node.level, module, is_package)
                names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                         for alias in node.names]
            else:
                name = _import_module_name(node, module, is_package)
                if name is None:
                    unread.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
                    continue
                names = [name]
            for name in names:
                target = _resolve(name, known)
                if target is None or target == module:
                    continue
                found.add(Edge(module, target, rel, node.lineno, function))
                parts, own = target.split("."), module.split(".")
                for k in range(2, len(parts)):  # the packages whose __init__ runs first
                    package = ".".join(parts[:k])
                    if parts[:k] != own[:k] and package in known:
                        found.add(Edge(module, package, rel, node.lineno, function,
                                       implied=True))
    return sorted(found), unread


# ---------------------------------------------------------------- layers and circles


def layer(module: str) -> int | None:
    """The row of the layer table ``module`` belongs to (the longest prefix wins)."""
    best, length = None, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = rank, len(prefix)
    return best


def package_of(module: str) -> str:
    """The package a violation is charged to: ``polypad.<x>`` or the top package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == FRONT_DOOR and len(parts) > 1 else parts[0]


# The imports the rules let through, each with why; the test prints them.
ALLOWED = [
    ("the front door re-exports from every row",
     lambda e: e.source == FRONT_DOOR),
    ("rich display: a _repr_html_ or _repr_svg_ method imports the pictures when a "
     "notebook asks",
     lambda e: e.function in ("_repr_html_", "_repr_svg_") and e.target.startswith("polypad.viz")),
    ("the command line imports each command's layers when it runs",
     lambda e: e.source == "polypad.cli" and e.function is not None),
    ("polypad.script.block_regions keeps the path docs/tvmscript.md used to document "
     "(nothing in polypad imports it)",
     lambda e: e.source == "polypad.script.block_regions"
     and e.target.startswith("analyses")),
]


def allowed(edge: Edge) -> str | None:
    """Why ``edge`` is let through, or None."""
    for why, rule in ALLOWED:
        if rule(edge):
            return why
    return None


def _circle(found: list[Edge], module: str, members: set[str]) -> list[Edge]:
    """A shortest circle of imports from ``module`` back to it, inside ``members``."""
    by_source: dict[str, list[Edge]] = {}
    for e in found:
        if e.target in members:
            by_source.setdefault(e.source, []).append(e)
    came: dict[str, Edge] = {}
    frontier = [module]
    while frontier:
        following = []
        for node in frontier:
            for e in by_source.get(node, []):
                if e.target == module:
                    path = [e]
                    while path[0].source != module:
                        path.insert(0, came[path[0].source])
                    return path
                if e.target not in came:
                    came[e.target] = e
                    following.append(e.target)
        frontier = following
    return []


def violations() -> tuple[dict[str, list[str]], dict[str, list[str]], list[str]]:
    """``(violations, details, let through)``: the violations per package, the edges
    behind each, and the edges the allow-list let through with why."""
    found, _ = edges()
    kept = [e for e in found if not allowed(e)]
    let_through = sorted({f"{allowed(e)}: {e.source} -> {e.target}" for e in found
                          if allowed(e)})
    out: dict[str, list[str]] = {}
    details: dict[str, list[str]] = {}

    def add(package: str, text: str, why: Iterable[Edge]) -> None:
        if text not in out.setdefault(package, []):
            out[package].append(text)
        details.setdefault(text, []).extend(str(e) for e in why)

    for e in kept:
        own, rank = layer(e.source), layer(e.target)
        if e.target == FRONT_DOOR and not e.implied:
            if own is None or LAYERS[own][0] != "faces":
                add(package_of(e.source), f"{e.source} imports the front door polypad", [e])
        elif own is not None and rank is not None and rank > own:
            add(package_of(e.source), f"{e.source} ({LAYERS[own][0]}) imports {e.target} "
                                      f"({LAYERS[rank][0]})", [e])
    graph = [e for e in kept if e.target != FRONT_DOOR]
    for component in cycles(graph):
        members = set(component)
        for module in component:
            add(package_of(module), f"{module} is in an import circle",
                _circle(graph, module, members))
    return ({k: sorted(v) for k, v in sorted(out.items())}, details, let_through)


def _report(found: dict[str, list[str]], details: dict[str, list[str]]) -> str:
    lines = []
    for package, texts in found.items():
        lines.append(f"{package}: {len(texts)}")
        for text in texts:
            lines.append(f"  {text}")
            lines += [f"      {d}" for d in details.get(text, [])]
    return "\n".join(lines)


# ---------------------------------------------------------------- the tests


def test_layer_table_matches_the_docs():
    text = (DOCS / "architecture.md").read_text()
    table = text[text.index("| layer | where | what |"):]
    rows = re.findall(r"^\| (\w+) \|", table, re.M)[1:len(LAYERS) + 1]
    assert rows == [name for name, _ in LAYERS]


def test_every_module_is_in_a_row():
    lost = [m for m in modules() if m != FRONT_DOOR and layer(m) is None]
    assert not lost, f"in no row of the layer table (add to docs/architecture.md and LAYERS): " \
                     f"{lost}"


# The import_module calls whose name is computed, which the graph cannot follow, and
# what they import.
COMPUTED_IMPORTS = {
    "analyses/__init__.py": "analyses' lazy exports: its own submodules",
    "polypad/schedule/primitives.py": "resolve(): the modules of the index's own paths "
                                       "(analyses and transform), for tests and docs",
}


def test_import_module_names_are_read():
    _, unread = edges()
    print("import_module calls with a computed name, not followed:", *unread, sep="\n  ")
    unknown = [u for u in unread if u.split(":")[0] not in COMPUTED_IMPORTS]
    assert not unknown, "import a constant name, or say in COMPUTED_IMPORTS what it imports"


def test_no_import_goes_up_a_layer_and_no_circle():
    found, details, let_through = violations()
    print("let through by the allow-list:", *let_through, sep="\n  ")
    assert not found, "imports against the layers or in a circle:\n" + _report(found, details)


if __name__ == "__main__":
    found, details, let_through = violations()
    print(_report(found, details))
