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

from pipeline.answering.asks import AnswerKind
from pipeline.answering.figures import Figure
from pipeline.intake.contract import Contract
from pipeline.types import SourceRef
from pipeline.values.figures import read_figures
from pipeline.values.money import currency_of
from pipeline.values.periods import find_dates
from pipeline.values.quantities import SCALES, Quantity, figures_outside_dates, in_digits, reference_kind
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
    only when it is of the kind's type (never 'N/A' in a number's field or 'Yes' in a yes/no field). A yes/no
    question that names no absent value of its own is not stated (None), never "No": nothing in scope says
    whether it happened."""
    own: Plain = contract.absent if contract is not None else None
    value: Plain = own if fits(kind, own) else None
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
        period=figure.cell.header[:200] or None,
        as_written=figure.as_written[:600],
        pages=(page,),
    )


def line_value(
    kind: ValueKind,
    line: str,
    pages: Sequence[SourceRef],
    contract: Contract | None,
    scale_note: str | None = None,
    *,
    sentence: bool = False,
    asked: AnswerKind | None = None,
) -> TypedValue:
    """The typed value an answer line states: its first figure (a bare mantissa times the scale its table
    notes), its first date, the line as a name or as text; absent when a number or date line states none.

    A line that is a whole evidence sentence (`sentence`: the line fell back to it) is read for the figure of the
    kind `asked` (`sentence_figure`: never a clause, section or street number, a year or a date); a name or names
    are not read from it (absent, with a note). A figure in another currency than the one asked is absent, with a
    note naming the currency found."""
    refs = tuple(pages)
    if sentence and kind in ("name", "names"):
        note = "the line is a whole sentence that fell back from the answer: no name is read from it"
        return absent(kind, contract, note).model_copy(update={"pages": refs})
    if kind == "number":
        if sentence:
            found = sentence_figure(line, asked, table_scale=scale_note is not None)
            figures = [found] if found is not None else []
        else:  # a clause, section or note number or a year opening a line is no figure of it ("1.3 The rent ...")
            figures = [q for q in figures_outside_dates(line) if reference_kind(line, q) is None]
        if sentence and not figures:
            note = f"the sentence holds no figure of the kind asked ({asked or 'a number'})"
            return absent(kind, contract, note).model_copy(update={"pages": refs})
        if not figures:
            return absent(kind, contract, "the line states no figure").model_copy(update={"pages": refs})
        figure = figures[0]
        currency = line_currency(line, figure)
        wanted = contract.currency if contract else None
        if wanted and currency and currency != wanted and not figure.percent:
            note = f"reported in {currency}, not the {wanted} asked for"
            update = {"pages": refs, "as_written": line[:600]}
            return absent(kind, contract, note).model_copy(update=update)
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


# A bare whole number right before a capitalised word: a number in a name or an address ("14 Elm Street").
_NAMED_NUMBER = re.compile(r"^\s+[A-Z][a-z]")


def sentence_figure(sentence: str, asked: AnswerKind | None, table_scale: bool = False) -> Quantity | None:
    """The figure of a whole sentence that answers a question asking for `asked`, read as the figure reader reads
    it (pipeline.values.figures: its currency, sign and scale): an amount has a currency or a scale (its own, or
    its table's when `table_scale`), a percentage is one, a count is whole; never a date, a year, a clause, section
    or note number (reference_kind), nor a bare number naming a place ("14 Elm Street"). None when it holds none."""
    for figure in read_figures(sentence):
        quantity = figure.quantity
        if reference_kind(sentence, quantity) is not None:
            continue
        bare = in_digits(quantity) and not quantity.scaled and not quantity.percent and figure.currency is None
        if bare and "," not in quantity.text and _NAMED_NUMBER.match(sentence[quantity.end :]):
            continue
        if asked == "percent" and not quantity.percent:
            continue
        if asked == "amount" and (quantity.percent or not (figure.currency or quantity.scaled or table_scale)):
            continue
        if asked == "count" and (quantity.percent or quantity.value != quantity.value.to_integral_value()):
            continue
        return quantity
    return None


def line_currency(line: str, quantity: Quantity) -> str | None:
    """The currency `line` writes beside its figure `quantity` (pipeline.values.figures reads it), as an ISO code
    when it is one (a local code such as "NGN" or "ZWL" stays as written); None when it writes none."""
    figure = next((f for f in read_figures(line) if f.quantity.start == quantity.start), None)
    if figure is None or figure.currency is None:
        return None
    return currency_of(figure.currency) or figure.currency


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
