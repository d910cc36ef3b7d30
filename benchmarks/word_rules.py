"""How much of the answering path decides by wording: regular expressions and phrase lists, counted per folder.

    .venv/bin/python benchmarks/word_rules.py [--json PATH] [--base COMMIT]

Counts, in `pipeline/answering`, `pipeline/intake`, `pipeline/values`, `pipeline/store` and `pipeline/guards`
(the parts that read a question or a document), every call that compiles or applies a regular expression
(`re.compile`, `re.search`, `re.match`, `re.fullmatch`, `re.findall`, `re.finditer`, `re.sub`, `re.split`), the
word alternatives those patterns hold (a `|` inside a pattern), and the phrase lists: module-level sets, tuples,
lists and dicts of three or more string literals, with their entries. With `--base`, the same counts of another
commit (read with `git show`, nothing checked out) side by side.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("pipeline/answering", "pipeline/intake", "pipeline/values", "pipeline/store", "pipeline/guards")
RE_CALLS = frozenset({"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"})
MIN_LIST = 3


@dataclass
class Counts:
    regex_calls: int = 0
    alternatives: int = 0
    phrase_lists: int = 0
    list_entries: int = 0

    def add(self, other: Counts) -> None:
        for name in asdict(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def count_source(source: str) -> Counts:
    """The counts of one module's source."""
    tree = ast.parse(source)
    counts = Counts()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in RE_CALLS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
        ):
            counts.regex_calls += 1
            counts.alternatives += sum(s.count("|") for s in _strings(node.args[0]) if node.args)
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if value is None:
            continue
        entries = _list_entries(value)
        if entries >= MIN_LIST:
            counts.phrase_lists += 1
            counts.list_entries += entries
    return counts


def _list_entries(value: ast.AST) -> int:
    """Entries of a literal collection of strings (also inside frozenset(...) or a split() string)."""
    if isinstance(value, ast.Call) and value.args:
        inner = value.args[0]
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "split":
            base = inner.func.value
            if isinstance(base, ast.Constant) and isinstance(base.value, str):
                return len(base.value.split())
        return _list_entries(inner)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "split":
        base = value.func.value
        if isinstance(base, ast.Constant) and isinstance(base.value, str):
            return len(base.value.split())
    if isinstance(value, ast.Set | ast.List | ast.Tuple):
        return sum(1 for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    if isinstance(value, ast.Dict):
        return sum(1 for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return 0


def _files(commit: str | None) -> dict[str, str]:
    if commit is None:
        return {
            str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for f in FOLDERS for p in (ROOT / f).rglob("*.py")
        }
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit, *FOLDERS], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        name: subprocess.run(
            ["git", "show", f"{commit}:{name}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        for name in listed
        if name.endswith(".py")
    }


def count(commit: str | None) -> dict[str, Counts]:
    """Per folder and in all, the counts of the working tree (commit None) or of `commit`."""
    out = {folder: Counts() for folder in (*FOLDERS, "all")}
    for name, source in _files(commit).items():
        found = count_source(source)
        folder = next(f for f in FOLDERS if name.startswith(f + "/"))
        out[folder].add(found)
        out["all"].add(found)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="a commit to count beside the working tree")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    head = count(None)
    base = count(args.base) if args.base else None
    print(f"{'folder':<22} {'regex calls':>12} {'alternatives':>13} {'phrase lists':>13} {'entries':>8}")
    for folder, counts in head.items():
        row = f"{folder:<22} {counts.regex_calls:>12} {counts.alternatives:>13} {counts.phrase_lists:>13} "
        row += f"{counts.list_entries:>8}"
        if base is not None:
            b = base[folder]
            row += f"   (base {b.regex_calls}, {b.alternatives}, {b.phrase_lists}, {b.list_entries})"
        print(row)
    if args.json:
        payload = {"head": {k: asdict(v) for k, v in head.items()}}
        if base is not None:
            payload["base"] = {k: asdict(v) for k, v in base.items()}
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
