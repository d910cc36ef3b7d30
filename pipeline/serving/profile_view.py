"""What the page shows of a program behind a profile: its modules and demos, and how two programs' prompts differ
(their prompts.md, demos included, line by line). Pure functions over validated program states."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pipeline.export.schema import PREDICTORS
from pipeline.serving.schemas import DiffLine, ModuleDiff, ModuleOut

# Lines of unchanged context around each change in a prompts diff.
CONTEXT_LINES = 3
MAX_DIFF_LINES = 5000


def modules(state: Mapping[str, Any]) -> list[ModuleOut]:
    """Each learned module of a program state and the number of its demos, in the order prompts.md lists them."""
    return [ModuleOut(name=name, demos=len(state[name]["demos"])) for name in PREDICTORS if name in state]


def module_diffs(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[ModuleDiff]:
    """For each module of either state: whether its instructions differ, and each side's demos."""

    def instructions(state: Mapping[str, Any], name: str) -> str | None:
        return state[name]["signature"]["instructions"] if name in state else None

    def demos(state: Mapping[str, Any], name: str) -> int:
        return len(state[name]["demos"]) if name in state else 0

    return [
        ModuleDiff(
            name=name,
            instructions_changed=instructions(a, name) != instructions(b, name),
            demos_a=demos(a, name),
            demos_b=demos(b, name),
        )
        for name in PREDICTORS
        if name in a or name in b
    ]


def diff_lines(a: str, b: str) -> list[DiffLine]:
    """A unified diff of two prompts.md texts: hunk headers ("@"), removed ("-"), added ("+") and context lines;
    empty when they are the same."""
    out: list[DiffLine] = []
    for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=CONTEXT_LINES):
        if line.startswith(("---", "+++")):
            continue
        kind = line[:1] if line[:1] in ("-", "+", "@") else " "
        out.append(DiffLine(kind=kind, text=line if kind == "@" else line[1:]))  # type: ignore[arg-type]
        if len(out) >= MAX_DIFF_LINES:
            out.append(DiffLine(kind="@", text=f"… the diff goes on past {MAX_DIFF_LINES} lines"))
            break
    return out
