"""An answer as terminal lines, shared by `scoperag ask` (the answer as it arrives) and `scoperag history ID`
(the answer as recorded): each section's heading, line, typed value, formula and quotes, and which way each
learned step ran."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.cli.common import styled

if TYPE_CHECKING:
    from rich.text import Text

    from pipeline.program.events import Section


def steps_line(steps: dict[str, str]) -> str:
    """Which way each learned step ran: "decompose: LM, score: floor keep_all, ..."."""
    return "steps: " + ", ".join(f"{name}: {'LM' if way == 'lm' else f'floor {way}'}" for name, way in steps.items())


def section_lines(section: Section, indent: str) -> list[Text]:
    """One answer section as terminal lines: heading, answer line, typed value, formula, evidence quotes."""
    from pipeline.program.events import value_text

    lines = [styled((f"{section.index + 1}. {section.sub_question}", "bold"))]
    if section.status == "error":
        return [*lines, styled(indent, (section.error or "", "red"))]
    value = [styled(indent, ("value: ", "dim"), value_text(section.value))] if section.value is not None else []
    if section.status == "not_found":
        return [*lines, styled(indent, (section.answer, "yellow")), *value]
    lines.append(styled(indent, (section.cited_answer, "bold green")))
    lines.extend(value)
    if section.formula:
        lines.append(styled(indent, ("computed: ", "dim"), section.formula))
    lines.extend(styled(indent + "  ", ("> ", "dim"), quote) for quote in section.cited_evidence)
    return lines
