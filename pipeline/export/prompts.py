"""The one prompt renderer: each predictor's instruction, fields and demos as plain text, so versions can be diffed.

prompts.md of an export is the whole program; MLflow's prompt registry holds one module per version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pipeline.export.schema import FORMAT, FORMAT_PREDICTORS, PREDICTORS


def render_prompts(state: Mapping[str, Any], format: str = FORMAT) -> str:
    """The prompts.md text of a validated program state in `format` (deterministic: same state, same text); a
    predictor the state leaves out (an optional one) is not listed."""
    parts = [
        f"# scoperag program prompts ({format})",
        "Generated from program.json by `scoperag export`; edit the program, not this file.",
        *(render_module(name, state[name], level=2) for name in FORMAT_PREDICTORS[format] if name in state),
    ]
    return "\n\n".join(parts) + "\n"


def render_module(
    name: str,
    predictor: Mapping[str, Any],
    *,
    level: int = 1,
    note: str | None = None,
    demo_style: Literal["json", "outline"] = "json",
) -> str:
    """One predictor's instructions, fields and demos as Markdown whose headings start at `level`.

    `note` follows the predictor's name in its heading (e.g. "optimised"). prompts.md is these
    sections at level 2 with demos as JSON (its bytes are checked against program.json); MLflow's
    prompt registry stores one at level 1 per module with demos as readable outlines.
    """
    signature = PREDICTORS[name]
    names = list(signature.fields)
    heading = "#" * level
    parts = [f"{heading} {name}" + (f" ({note})" if note else "")]
    parts.append(f"{heading}# Instructions")
    parts.append(_block(predictor["signature"]["instructions"], "text"))
    parts.append(f"{heading}# Fields")
    lines = []
    for field_name, saved in zip(names, predictor["signature"]["fields"], strict=True):
        kind = "input" if field_name in signature.input_fields else "output"
        prefix = json.dumps(saved["prefix"], ensure_ascii=False)
        description = json.dumps(saved["description"], ensure_ascii=False)
        lines.append(f"- {field_name} ({kind}): prefix {prefix}, description {description}")
    parts.append("\n".join(lines))
    demos = predictor["demos"]
    parts.append(f"{heading}# Demos ({len(demos)})")
    for number, demo in enumerate(demos, start=1):
        parts.append(f"{heading}## Demo {number}")
        # Signature fields first, in signature order; any other keys after, sorted.
        keys = [k for k in names if k in demo] + sorted(k for k in demo if k not in names)
        for key in keys:
            value = demo[key]
            if isinstance(value, str):
                parts.append(f"{key}:\n{_block(value, 'text')}")
            elif demo_style == "outline":
                parts.append(f"{key}:\n{_block(outline(value), 'yaml')}")
            else:
                text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
                parts.append(f"{key}:\n{_block(text, 'json')}")
    return "\n\n".join(parts)


def outline(value: Any, indent: int = 0) -> str:
    """`value` (JSON data) as an indented YAML-like outline: one key per line, long or multi-line text as an
    indented block under its key, so a demo's chunks and sections read as text rather than escaped JSON."""
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return pad + "{}"
        lines = []
        for key, item in value.items():
            if isinstance(item, Mapping | list) and item:
                lines.append(f"{pad}{key}:\n{outline(item, indent + 2)}")
            elif isinstance(item, str) and ("\n" in item or len(item) > 80):
                lines.append(f"{pad}{key}: |\n{_indented(item, indent + 2)}")
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
        return "\n".join(lines)
    if isinstance(value, list):
        if not value:
            return pad + "[]"
        lines = []
        for item in value:
            inner = outline(item, indent + 2)
            lines.append(f"{pad}- {inner[indent + 2 :]}")
        return "\n".join(lines)
    if isinstance(value, str) and ("\n" in value or len(value) > 80):
        return f"{pad}|\n{_indented(value, indent + 2)}"
    return pad + _scalar(value)


def _indented(text: str, indent: int) -> str:
    return "\n".join(" " * indent + line for line in text.splitlines())


def _scalar(value: Any) -> str:
    """A scalar as in JSON, except that a one-line string is shown without quotes."""
    if isinstance(value, str) and value and value.strip() == value and not value.startswith(("-", "|", "[", "{")):
        return value
    return json.dumps(value, ensure_ascii=False)


def _block(text: str, language: str) -> str:
    """`text` in a fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
