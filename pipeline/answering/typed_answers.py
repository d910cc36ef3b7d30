"""The typed value of a section (pipeline.values.typed), from what the answer step found: a figure read from a
table, or the answer line of another kind; the question's own absent value when nothing in scope states it
(pure functions).

A figure is given in units ("$81,797 million" -> 81797000000) unless the question asked for a scale, and in
the currency it is reported in: a figure in another currency than the question asks for is absent, with a
note naming the currency found (never shown unconverted as if it were the one asked).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from decimal import Decimal

from pipeline.answering.figures import Figure
from pipeline.intake.contract import Contract
from pipeline.types import SourceRef
from pipeline.values.periods import find_dates
from pipeline.values.quantities import SCALES, figures_outside_dates
from pipeline.values.typed import Plain, TypedValue, ValueKind, fits

# Decimal places a number keeps in a typed value (beyond what a report prints).
MAX_PLACES = 6


def plain_number(value: Decimal) -> int | float:
    """A JSON number for `value`: an int when whole, else a float rounded to MAX_PLACES."""
    if value == value.to_integral_value():
        return int(value)
    return float(round(value, MAX_PLACES))


def absent(kind: ValueKind, contract: Contract | None, note: str | None = None) -> TypedValue:
    """An absent value of `kind`: the question's own absent value ('N/A', False) as its own field, and as the value
    only when it is of the kind's type (never 'N/A' in a number's field or 'Yes' in a yes/no field); for a yes/no
    question with no absent value of its own, False (nothing in scope states that it happened)."""
    own: Plain = contract.absent if contract is not None else None
    value: Plain = own if fits(kind, own) else None
    if own is None and kind == "boolean":
        value = False
    return TypedValue(kind=kind, value=value, absent=True, absent_value=own, note=note)


def figure_value(figure: Figure, filename: str, contract: Contract | None) -> TypedValue:
    """The typed value of a figure read from a table: in units or in the scale asked, with its currency; absent
    (with a note) when it is reported in another currency than the one asked."""
    page = SourceRef(document_id=figure.document_id, filename=filename, page=figure.page)
    asked_currency = contract.currency if contract else None
    if asked_currency and figure.currency and figure.currency != asked_currency and figure.unit != "%":
        note = f"reported in {figure.currency}, not the {asked_currency} asked for"
        return absent("number", contract, note).model_copy(update={"pages": (page,), "as_written": figure.as_written})
    scale = contract.scale if contract and figure.unit is None else None
    value = figure.value / SCALES[scale] if scale else figure.value
    return TypedValue(
        kind="number",
        value=plain_number(value),
        unit=figure.unit,
        currency=None if figure.unit == "%" else figure.currency,
        scale=scale,
        period=figure.cell.header or None,
        as_written=figure.as_written[:600],
        pages=(page,),
    )


def line_value(
    kind: ValueKind, line: str, pages: Sequence[SourceRef], contract: Contract | None, scale_note: str | None = None
) -> TypedValue:
    """The typed value an answer line states: its first figure (a bare mantissa times the scale its table
    notes), its first date, the line as a name or as text; absent when a number or date line states none."""
    refs = tuple(pages)
    if kind == "number":
        figures = figures_outside_dates(line)
        if not figures:
            return absent(kind, contract, "the line states no figure").model_copy(update={"pages": refs})
        figure = figures[0]
        number = figure.value if figure.scaled else figure.mantissa * SCALES.get(scale_note or "", Decimal(1))
        unit = "%" if figure.percent else None
        scale = contract.scale if contract and unit is None else None
        value = number / SCALES[scale] if scale else number
        return TypedValue(
            kind=kind, value=plain_number(value), unit=unit, scale=scale, as_written=line[:600], pages=refs
        )
    if kind == "date":
        days = find_dates(line)
        if not days:
            return absent(kind, contract, "the line states no date").model_copy(update={"pages": refs})
        day: date = days[0][2]
        return TypedValue(kind=kind, value=day.isoformat(), as_written=line[:600], pages=refs)
    if kind == "names":
        return TypedValue(kind=kind, value=[line], as_written=line[:600], pages=refs)
    if kind == "boolean":
        return TypedValue(kind=kind, value=True, as_written=line[:600], pages=refs)
    return TypedValue(kind=kind, value=line, as_written=line[:600], pages=refs)


_YEAR = re.compile(r"^(?:19|20)\d\d$")


def states_figure(line: str, count: bool = False) -> bool:
    """Whether an answer line states a figure that can answer a question asking for a number: one that is not
    a bare year ("2022"), nor (unless a count is asked, "how many") a lone small number with nothing to say what
    it is."""
    figures = figures_outside_dates(line)
    if not figures:
        return False
    first = figures[0]
    written = first.text.strip("()$€£¥ ")
    if _YEAR.match(written) and not first.percent:
        return False
    said = re.sub(r"[\d.,()%$€£¥\s-]", "", line)
    return count or first.percent or first.scaled or bool(said) or abs(first.value) >= 1000
