"""A one-figure answer line written as the question's format instructions ask ("Answer in EUR billions.",
"to one decimal place", "as a percentage"), the figure as reported kept beside it. A currency asked for is
never a rename, and a figure whose scale cannot be read is never rescaled by guess: such lines stay as
reported, with why in the section's interventions."""

from __future__ import annotations

import re
from dataclasses import replace

from pipeline.answering.asks import FormatRequest
from pipeline.answering.compute import format_figure
from pipeline.answering.lines import SectionInputs
from pipeline.answering.sentences import table_rows
from pipeline.answering.spans import scale_note
from pipeline.answering.typed_answers import line_currency
from pipeline.guards.sections import GuardedSection
from pipeline.text import normalise
from pipeline.values.quantities import figures_outside_dates

# A currency written beside a figure ("EUR 285,000", "$5"): a figure in prose, in units.
_MONEY_WORD = re.compile(r"(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])|[$€£¥]")


def formatted_line(section: GuardedSection, request: FormatRequest | None, item: SectionInputs) -> GuardedSection:
    """A one-figure line written as the question's format instructions ask ("in EUR billions"), the figure
    as reported kept beside it; other lines unchanged."""
    if request is None or section.status != "answered" or section.basis == "computed":
        return section
    if request.scale is None and request.decimals is None and not request.percent:
        return section
    figures = figures_outside_dates(section.line)
    if len(figures) != 1:
        return section
    figure = figures[0]
    if request.percent and not figure.percent:
        return section
    if request.currency and not figure.percent:
        found = line_currency(section.line, figure)
        if found is not None and found != request.currency:
            # a currency asked for is never a rename: the figure stays as reported, in the evidence's currency
            said = f"reported in {found}, not the {request.currency} asked for"
            written = ("format", f"not written as asked ({request.text}): {said}")
            return replace(section, line=f"{section.line} ({said})", interventions=(*section.interventions, written))
        if found is None:  # no currency beside the figure: none is named for it
            request = replace(request, currency=None)
            if request.scale is None and request.decimals is None:
                return section
    scale = None
    if not figure.scaled:
        quoted = next((s for s in item.sentences if s.text and section.line in s.text), None)
        scale = scale_note(quoted.hit.chunk.text) if quoted else None
        in_table = quoted is not None and (" | " in quoted.text or len(table_rows(quoted.text)) > 1)
        # a figure with its currency in prose is in units; in a table row, its scale is the table's note
        unknown = scale is None and (in_table or not _MONEY_WORD.search(section.line))
        if unknown and request.scale is not None and not figure.percent:
            return section  # a bare figure of no known scale is not rescaled by guess: shown as reported
    value = figure.value if figure.scaled else figure.mantissa
    text = format_figure(value, figure.percent, request, scale)
    if normalise(text) == normalise(section.line):
        return section
    written = ("format", f"written as asked: {request.text}")
    return replace(
        section, line=f"{text} (as reported: {section.line})", interventions=(*section.interventions, written)
    )
