"""Guards check what answering drafts, so the dependency runs one way: `pipeline.guards` may import
`pipeline.answering`, never the reverse, directly or through other modules. Imports are read with `ast`."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

from tests.support.paths import ROOT

ANSWERING = "pipeline.answering"
GUARDS = "pipeline.guards"
FIRST_PARTY = ("pipeline", "signatures")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path) -> dict[str, Path]:
    """Every first-party module under `root`, by dotted name (a package by its own name)."""
    return {
        _module_name(p, root): p for top in FIRST_PARTY if (root / top).is_dir() for p in (root / top).rglob("*.py")
    }


def _imported_names(path: Path) -> set[str]:
    """Every dotted name an import statement of the file names, at any depth (a lazy import in a function
    counts): `import a.b` gives a.b, `from a.b import c` gives a.b and a.b.c."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the first-party modules loading it loads directly: what it imports and every package on the
    way to each (importing a.b.c runs a/__init__ and a/b/__init__), and its own enclosing packages."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {*_imported_names(path), name}
        prefixes = {".".join(t.split(".")[:i]) for t in targets for i in range(1, t.count(".") + 2)}
        graph[name] = {m for m in prefixes if m in modules} - {name}
    return graph


def import_path(graph: dict[str, set[str]], sources: set[str], targets: set[str]) -> list[str]:
    """The shortest chain of imports from a module in `sources` to one in `targets` ([] when none reaches)."""
    before: dict[str, str | None] = dict.fromkeys(sorted(sources))
    queue = deque(sorted(sources))
    while queue:
        current = queue.popleft()
        if current in targets:
            chain = [current]
            while (previous := before[chain[-1]]) is not None:
                chain.append(previous)
            return chain[::-1]
        for nxt in sorted(graph.get(current, set()) - before.keys()):
            before[nxt] = current
            queue.append(nxt)
    return []


def package(graph: dict[str, set[str]], name: str) -> set[str]:
    """The modules of package `name`, itself included."""
    return {m for m in graph if m == name or m.startswith(name + ".")}


def test_no_answering_module_imports_guards() -> None:
    offenders = {
        name: sorted(n for n in _imported_names(path) if n == GUARDS or n.startswith(GUARDS + "."))
        for name, path in _modules(ROOT).items()
        if name.startswith(ANSWERING)
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_from_pipeline_import_guards_counts_as_importing_guards(tmp_path: Path) -> None:
    (tmp_path / "pipeline" / "answering").mkdir(parents=True)
    (tmp_path / "pipeline" / "__init__.py").write_text("")
    (tmp_path / "pipeline" / "answering" / "__init__.py").write_text("")
    (tmp_path / "pipeline" / "answering" / "lines.py").write_text("def f():\n    from pipeline import guards\n")
    assert "pipeline.guards" in _imported_names(tmp_path / "pipeline" / "answering" / "lines.py")


def test_no_import_cycle_between_answering_and_guards() -> None:
    graph = import_graph(ROOT)
    answering, guards = package(graph, ANSWERING), package(graph, GUARDS)
    # the remaining edge exists (else the check below would pass whatever the other direction did) ...
    assert import_path(graph, guards, answering) != []
    # ... and no chain of imports, through any other package, leads back
    assert import_path(graph, answering, guards) == []


def test_cycle_check_finds_a_loop_through_a_third_package(tmp_path: Path) -> None:
    files = {
        "pipeline/__init__.py": "",
        "pipeline/answering/__init__.py": "",
        "pipeline/answering/sentences.py": "from pipeline.store.tables import CAPTION\n",
        "pipeline/store/__init__.py": "from pipeline.store.index import Store\n",
        "pipeline/store/index.py": "import pipeline.guards.ids\n",
        "pipeline/store/tables.py": "CAPTION = 1\n",
        "pipeline/guards/__init__.py": "",
        "pipeline/guards/ids.py": "def check():\n    from pipeline.answering import sentences\n",
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    graph = import_graph(tmp_path)
    answering, guards = package(graph, ANSWERING), package(graph, GUARDS)
    assert import_path(graph, guards, answering) == ["pipeline.guards.ids", "pipeline.answering"]
    assert import_path(graph, answering, guards) == [
        "pipeline.answering.sentences",
        "pipeline.store",
        "pipeline.store.index",
        "pipeline.guards",
    ]
