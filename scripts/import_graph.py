"""The import graph of polypad's own packages, read from the source with ``ast``.

    .venv/bin/python scripts/import_graph.py [--edges] [--module-level]

Every ``import`` and ``from ... import`` counts, wherever it stands: at module
level, inside a function (an import deferred to call time is still a
dependency), and under ``if TYPE_CHECKING:``; so does
``importlib.import_module`` with a constant name (:func:`computed_imports`
lists the calls whose name is computed, which no reader can follow).  Each
edge records which of these it is (:attr:`Edge.where`, and the function it
stands in, :attr:`Edge.function`), so a caller can leave some out.

An edge goes to the most specific module the statement names:
``from polypad.ir import nodes`` is an edge to ``polypad.ir.nodes`` (a module),
``from polypad.ir.nodes import Var`` one to ``polypad.ir.nodes`` too, and
``from codegen import build`` one to ``codegen`` (a package, whose
``__init__`` defines the name).  Importing a submodule runs its packages'
``__init__`` files as well: ``from polypad.transform.simplify import simplify``
runs ``polypad/transform/__init__.py``, which imports every pass, before
``simplify.py``.  ``edges(implied=True)`` adds those edges too
(:attr:`Edge.implied`): from the importer to every package above the target
that is not a package of the importer itself (whose ``__init__`` is already
running).  ``edges(named_packages=True)`` adds, for every
``from PACKAGE import name``, an edge to ``PACKAGE`` itself, the importer's own
package included (also :attr:`Edge.implied`): the stricter reading under which
``from . import vector_width`` inside a package's module imports the package.

:func:`edges` returns the edges; :func:`cycles` the strongly connected
components of more than one module (each a set of modules that import one
another in a circle), over the edges given.  Run as a script it prints the
cycles, and with ``--edges`` every edge.
"""

from __future__ import annotations

import argparse
import ast
import functools
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The packages whose modules make the graph; imports of anything else are left out.
PACKAGES = ("polypad", "analyses", "codegen")
#: Where an import statement stands.
MODULE, FUNCTION, TYPE_CHECKING = "module", "function", "type-checking"


@dataclass(frozen=True, order=True)
class Edge:
    """``source`` imports ``target`` at ``line`` of ``path``; ``where`` is
    :data:`MODULE`, :data:`FUNCTION` (inside a function or method) or
    :data:`TYPE_CHECKING` (under ``if TYPE_CHECKING:``, never run)."""

    source: str
    target: str
    where: str
    path: str
    line: int
    #: Whether the statement names a module inside ``target``, a package whose
    #: ``__init__`` runs first (see the module docstring).
    implied: bool = False
    #: The name of the function the import stands in (None at module level).
    function: str | None = None

    def __str__(self) -> str:
        how = f"{self.where}, implied" if self.implied else self.where
        inside = f" in {self.function}()" if self.function else ""
        return f"{self.source} -> {self.target}  [{how}, {self.path}:{self.line}{inside}]"


def module_name(path: Path, root: Path = ROOT) -> str:
    """The dotted name of the module in ``path`` (a package's ``__init__.py`` is the
    package)."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``, by dotted name."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            found[module_name(path, root)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """``name``, or the longest of its prefixes that is a known module."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _absolute(name: str, level: int, module: str, is_package: bool) -> str:
    """``name`` imported with ``level`` leading dots from ``module``, made absolute."""
    if not level:
        return name
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".")
    parts = parts[:len(parts) - level + 1]
    return ".".join(parts + ([name] if name else []))


def _is_import_module(node: ast.AST) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module")


def _import_module_name(call: ast.Call, module: str, is_package: bool) -> str | None:
    """The module ``importlib.import_module(name[, package])`` imports, where ``name``
    is a constant (and ``package`` ``__name__`` or ``__package__``); else None."""
    if not call.args:
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


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import statement and ``import_module`` call of ``tree``, with where it
    stands and the name of the function it stands in (None at module level)."""
    stack: list[tuple[ast.AST, str, str | None]] = [(tree, MODULE, None)]
    while stack:
        node, where, function = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_import_module(node):
            yield node, where, function
            if not isinstance(node, ast.Call):
                continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack += [(child, TYPE_CHECKING, function) for child in node.body]
            stack += [(child, where, function) for child in node.orelse]
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            where, function = FUNCTION, node.name
        elif isinstance(node, ast.Lambda):
            where = FUNCTION
        stack += [(child, where, function) for child in ast.iter_child_nodes(node)]


def _packages_above(target: str, source: str) -> list[str]:
    """The packages whose ``__init__`` importing ``target`` from ``source`` runs, other
    than ``source``'s own packages."""
    own = source.split(".")
    parts = target.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))
            if parts[:k] != own[:k]]


def edges(root: Path = ROOT, packages: Iterable[str] = PACKAGES, *,
          implied: bool = False, named_packages: bool = False) -> list[Edge]:
    """Every import edge between modules of ``packages`` (see the module docstring),
    sorted, one per import statement and target; with ``implied``, also the edges to
    the packages whose ``__init__`` such an import runs, and with ``named_packages``
    to the package a ``from`` import names."""
    known = modules(root, packages)
    found: set[Edge] = set()
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        rel = str(path.relative_to(root))
        for node, where, function in _imports(ast.parse(path.read_text(), str(path))):
            edge = functools.partial(Edge, module, where=where, path=rel, line=node.lineno,
                                     function=function)
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node.module or "", node.level, module, is_package)
                names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                         for alias in node.names]
                if named_packages and base in known and base != module and base not in names:
                    found.add(edge(target=base, implied=True))
            else:
                name = _import_module_name(node, module, is_package)
                names = [] if name is None else [name]
            for name in names:
                target = _resolve(name, known)
                if target is None or target == module:
                    continue
                found.add(edge(target=target))
                if implied:
                    for package in _packages_above(target, module):
                        if package in known:
                            found.add(edge(target=package, implied=True))
    return sorted(found)


def computed_imports(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[str]:
    """The ``import_module`` calls whose module name is computed, which :func:`edges`
    cannot follow: ``"path:line: call"`` each."""
    out = []
    for module, path in modules(root, packages).items():
        rel = str(path.relative_to(root))
        for node, _, _ in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and _import_module_name(
                    node, module, path.name == "__init__.py") is None:
                out.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return out


def graph(found: Iterable[Edge]) -> dict[str, set[str]]:
    """The edges as a map from each module to the modules it imports."""
    out: dict[str, set[str]] = {}
    for edge in found:
        out.setdefault(edge.source, set()).add(edge.target)
        out.setdefault(edge.target, set())
    return out


def cycles(found: Iterable[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted, largest
    first (Tarjan's algorithm, without recursion)."""
    succ = {k: sorted(v) for k, v in graph(found).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for start in sorted(succ):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(succ[node]):
                work.append((node, i + 1))
                child = succ[node][i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if work:  # back in the parent: pass the low link up
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return sorted(components, key=lambda c: (-len(c), c))


def shortest_cycle(found: Iterable[Edge], module: str) -> list[Edge] | None:
    """A shortest circle of imports from ``module`` back to it, as its edges; None if
    there is none (breadth first over the edges given)."""
    by_source: dict[str, list[Edge]] = {}
    for edge in sorted(found):
        by_source.setdefault(edge.source, []).append(edge)
    came: dict[str, Edge] = {}
    frontier = [module]
    while frontier:
        following = []
        for node in frontier:
            for edge in by_source.get(node, []):
                if edge.target == module:
                    path = [edge]
                    while path[0].source != module:
                        path.insert(0, came[path[0].source])
                    return path
                if edge.target not in came:
                    came[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    return None


def involving(components: list[list[str]], prefixes: Iterable[str]) -> list[list[str]]:
    """The components that hold a module named by one of ``prefixes`` (a package and
    everything in it)."""
    prefixes = tuple(prefixes)
    return [c for c in components
            if any(m == p or m.startswith(p + ".") for m in c for p in prefixes)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every edge")
    parser.add_argument("--module-level", action="store_true",
                        help="count module-level imports only")
    parser.add_argument("--implied", action="store_true",
                        help="add the edges to the packages whose __init__ an import runs")
    parser.add_argument("--named-packages", action="store_true",
                        help="add an edge to the package every `from PACKAGE import` names")
    parser.add_argument("--involving", metavar="PACKAGE,...",
                        help="only the cycles through these packages, each with a shortest "
                             "circle through each of their modules in it")
    options = parser.parse_args(argv)
    found = edges(implied=options.implied, named_packages=options.named_packages)
    if options.module_level:
        found = [e for e in found if e.where == MODULE]
    if options.edges:
        for edge in found:
            print(edge)
    components = cycles(found)
    print(f"{len(found)} edges between {len(graph(found))} modules; "
          f"{len(components)} cycles")
    if options.involving:
        prefixes = options.involving.split(",")
        chosen = involving(components, prefixes)
        print(f"{len(chosen)} of them through {', '.join(prefixes)}")
        for component in chosen:
            ours = [m for m in component
                    if any(m == p or m.startswith(p + ".") for p in prefixes)]
            print(f"cycle of {len(component)} holding {', '.join(ours)}")
            for module in ours:
                print(f"  a shortest circle through {module}:")
                for edge in shortest_cycle(found, module) or []:
                    print(f"    {edge}")
        return 0
    for component in components:
        members = set(component)
        print(f"cycle of {len(component)}: {', '.join(component)}")
        for edge in found:
            if edge.source in members and edge.target in members:
                print(f"    {edge}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
