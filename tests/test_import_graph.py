"""Every dependency between the project's own modules runs one way: no module imports, directly or through
others, a module that imports it back. A circle makes the load order decide which names exist yet, and hides
which of the two modules is the lower layer.

Imports are read with `ast`, nothing is imported. An import inside a function counts as an edge like one at
the top of the module (a lazy import still ties the two modules together). `from a.b import c` points at the
submodule `a.b.c` when there is one, else at `a.b`. scripts/ is no package: its files import each other by
bare name, which resolves to the sibling file. An import under `if TYPE_CHECKING:` counts too (the type checker
follows it). The packages on the way to an imported module (`a/__init__` for `a.b`) are not edges: a package's
`__init__` importing its own submodules would otherwise always look like a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGES = ("pipeline", "signatures", "optimizers", "experiments")
SCRIPTS = "scripts"
CHECKED = (*PACKAGES, SCRIPTS)


def module_name(path: Path, root: Path) -> str:
    """The dotted name of a file under `root` (a package by its own name)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules(root: Path, tops: tuple[str, ...]) -> dict[str, Path]:
    """Every .py under the given top-level folders of `root`, by dotted name."""
    return {module_name(p, root): p for top in tops for p in sorted((root / top).rglob("*.py"))}


def _absolute_base(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module a `from ... import` reads from, with a relative import resolved against the importer."""
    if node.level == 0:
        return node.module or ""
    package = importer.split(".") if is_package else importer.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imported_modules(tree: ast.AST, importer: str, is_package: bool, modules: set[str]) -> set[str]:
    """The project modules an importer's import statements name, at any depth in the file.

    `import a.b` names a.b; `from a.b import c` names a.b.c when that is a module, else a.b. A bare name that
    is no project module but is a sibling script (scripts/ imports `from absence import ...`) names the
    sibling."""

    def resolve(name: str) -> str | None:
        if name in modules:
            return name
        sibling = f"{SCRIPTS}.{name}"
        if importer.startswith(f"{SCRIPTS}.") and sibling in modules:
            return sibling
        return None

    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(m for alias in node.names if (m := resolve(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute_base(node, importer, is_package)
            for alias in node.names:
                target = resolve(f"{base}.{alias.name}") if base else resolve(alias.name)
                target = target or resolve(base)
                if target:
                    found.add(target)
    return found


def import_graph(root: Path, tops: tuple[str, ...] = CHECKED) -> dict[str, set[str]]:
    """Module -> the project modules it imports (itself left out)."""
    modules = project_modules(root, tops)
    names = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = imported_modules(tree, name, path.name == "__init__.py", names) - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as [a, b, ..., a], or [] when it has none. Depth-first, visiting names in
    sorted order so the same graph always reports the same cycle."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path = [start]
        pending = [iter(sorted(graph.get(start, ())))]
        while pending:
            following = next(pending[-1], None)
            if following is None:
                pending.pop()
                done.add(path.pop())
            elif following in path:
                return [*path[path.index(following) :], following]
            elif following not in done:
                path.append(following)
                pending.append(iter(sorted(graph.get(following, ()))))
    return []


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` loads, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for following in graph.get(todo.pop(), ()):
            if following not in seen:
                seen.add(following)
                todo.append(following)
    return seen


def cycles_through(graph: dict[str, set[str]], top: str) -> list[list[str]]:
    """One cycle for each circle of imports that a module under the folder `top` is part of."""
    reach = {name: reachable(graph, name) for name in graph}
    found: list[list[str]] = []
    covered: set[str] = set()
    for name in sorted(graph):
        if name.split(".")[0] != top or name in covered or name not in reach[name]:
            continue
        circle = {other for other in reach[name] if name in reach[other]}
        covered |= circle
        found.append(find_cycle({m: graph[m] & circle for m in circle}))
    return found


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]


def test_cycle_finder_passes_a_graph_without_cycle() -> None:
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_resolves_submodules_relative_and_function_level_imports() -> None:
    source = (
        "from pkg import sub, NAME\n"
        "from .sibling import thing\n"
        "def later():\n"
        "    import pkg.deep\n"
        "    from . import other\n"
    )
    modules = {"pkg", "pkg.sub", "pkg.deep", "pkg.mod", "pkg.sibling", "pkg.other"}
    found = imported_modules(ast.parse(source), "pkg.mod", False, modules)
    assert found == {"pkg", "pkg.sub", "pkg.deep", "pkg.sibling", "pkg.other"}


@pytest.fixture(scope="module")
def project_graph() -> dict[str, set[str]]:
    return import_graph(ROOT)


@pytest.mark.parametrize("top", CHECKED)
def test_no_import_cycle(project_graph: dict[str, set[str]], top: str) -> None:
    found = cycles_through(project_graph, top)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)
