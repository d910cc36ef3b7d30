"""The one prompt renderer: each predictor's instruction, fields and demos as plain text, so versions can be diffed.

prompts.md of an export is the whole program; MLflow's prompt registry holds one module per version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pipeline.export.schema import FORMAT, FORMAT_PREDICTORS, PREDICTORS


def render_prompts(state: Mapping[str, Any], format: str = FORMAT) -> str:
    """The prompts.md text of a validated program state in `format` (deterministic: same state, same text)."""
    parts = [
        f"# scoperag program prompts ({format})",
        "Generated from program.json by `scoperag export`; edit the program, not this file.",
        *(render_module(name, state[name], level=2) for name in FORMAT_PREDICTORS[format]),
    ]
    return "\n\n".join(parts) + "\n"


def render_module(name: str, predictor: Mapping[str, Any], *, level: int = 1, note: str | None = None) -> str:
    """One predictor's instructions, fields and demos as Markdown whose headings start at `level`.

    `note` follows the predictor's name in its heading (e.g. "optimised"). prompts.md is these
    sections at level 2; MLflow's prompt registry stores one at level 1 per module.
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
            else:
                text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
                parts.append(f"{key}:\n{_block(text, 'json')}")
    return "\n\n".join(parts)


def _block(text: str, language: str) -> str:
    """`text` in a fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
