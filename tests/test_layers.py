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

import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "scripts"))
# Reading the imports, and the circles of a graph, are kept once: in the script that
# prints them.
import import_graph  # noqa: E402
from import_graph import Edge, cycles, modules, shortest_cycle  # noqa: E402

#: The packages whose modules make the graph; imports of anything else are left out.
PACKAGES = ("polypad", "analyses", "codegen")
FRONT_DOOR = "polypad"

# The rows of the layer table of docs/architecture.md, top to bottom; a module may
# import only from its own row and the rows above it.
LAYERS = [
    ("support", ["polypad.errors", "polypad.arguments", "polypad.budget", "polypad.concurrency",
                 "polypad.durations", "polypad.isl_failure", "polypad._version"]),
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

def edges() -> list[Edge]:
    """Every import edge between the modules of :data:`PACKAGES`, with the edges to the
    packages whose ``__init__`` an import runs (see the module docstring)."""
    return import_graph.edges(ROOT, PACKAGES, implied=True)


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


def violations() -> tuple[dict[str, list[str]], dict[str, list[str]], list[str]]:
    """``(violations, details, let through)``: the violations per package, the edges
    behind each, and the edges the allow-list let through with why."""
    found = edges()
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
        for module in component:
            add(package_of(module), f"{module} is in an import circle",
                shortest_cycle(graph, module) or [])
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
    unread = import_graph.computed_imports(ROOT, PACKAGES)
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


def test_the_analyses_load_first_without_the_layers_above_them():
    # The front door loads the schedule, the passes and the tuner on first use: an
    # analyses module imported first in a fresh process (``import analyses.combiners``)
    # must not run into a schedule module that imports it back while it loads.
    import subprocess

    code = ("import analyses.combiners, importlib, pkgutil, sys, analyses\n"
            "for m in pkgutil.iter_modules(analyses.__path__):\n"
            "    importlib.import_module('analyses.' + m.name)\n"
            "print(sorted(x for x in sys.modules if x.startswith(('polypad.schedule', "
            "'polypad.transform', 'polypad.tuner', 'codegen'))))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
