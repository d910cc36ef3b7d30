"""prompts.md: each predictor's instruction, fields and demos as plain text, so versions can be diffed."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pipeline.export.schema import FORMAT, PREDICTORS


def render_prompts(state: Mapping[str, Any]) -> str:
    """The prompts.md text of a validated program state (deterministic: same state, same text)."""
    parts = [
        f"# scoperag program prompts ({FORMAT})",
        "Generated from program.json by `scoperag export`; edit the program, not this file.",
    ]
    for name, signature in PREDICTORS.items():
        predictor = state[name]
        names = list(signature.fields)
        parts.append(f"## {name}")
        parts.append("### Instructions")
        parts.append(_block(predictor["signature"]["instructions"], "text"))
        parts.append("### Fields")
        lines = []
        for field_name, saved in zip(names, predictor["signature"]["fields"], strict=True):
            kind = "input" if field_name in signature.input_fields else "output"
            prefix = json.dumps(saved["prefix"], ensure_ascii=False)
            description = json.dumps(saved["description"], ensure_ascii=False)
            lines.append(f"- {field_name} ({kind}): prefix {prefix}, description {description}")
        parts.append("\n".join(lines))
        demos = predictor["demos"]
        parts.append(f"### Demos ({len(demos)})")
        for number, demo in enumerate(demos, start=1):
            parts.append(f"#### Demo {number}")
            # Signature fields first, in signature order; any other keys after, sorted.
            keys = [k for k in names if k in demo] + sorted(k for k in demo if k not in names)
            for key in keys:
                value = demo[key]
                if isinstance(value, str):
                    parts.append(f"{key}:\n{_block(value, 'text')}")
                else:
                    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
                    parts.append(f"{key}:\n{_block(text, 'json')}")
    return "\n\n".join(parts) + "\n"


def _block(text: str, language: str) -> str:
    """`text` in a fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
