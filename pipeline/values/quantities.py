"""Figures and dates as values: the one normalisation that grounding, fact matching and answer
formatting share (pure functions).

A quantity is a number as written with its scale word applied ("$1,577 million" and "1.577 billion"
are both 1,577,000,000), whether it is a percentage ("5%", "5 per cent", "five percent"), and its
precision (the place of its last written digit, scale included). Currency symbols and words are
not part of the value: "EUR 285,000" and "285,000" are the same figure. Numbers written as words
("seventy-five per cent", "fourteen days") are read too. A date is every calendar day a written
date can mean: "10/11/96" is 11 October or 10 November 1996, and matches "Oct. 11, 1996".
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from pipeline.text import tokens
from pipeline.values.periods import find_dates

SCALES: dict[str, Decimal] = {
    "thousand": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
    "bn": Decimal(10) ** 9,
    "mn": Decimal(10) ** 6,
}
# Scale letters glued to a number ("1.2m", "15k", "3bn").
_GLUED = {"k": Decimal(10) ** 3, "m": Decimal(10) ** 6, "bn": Decimal(10) ** 9, "b": Decimal(10) ** 9}

_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_WORD = "|".join(sorted([*_UNITS, *_TENS], key=len, reverse=True))
# "seventy-five", "twenty one", "two hundred and fifty", "one hundred"
_WORD_NUMBER = re.compile(
    rf"\b(?:(?:{_WORD})(?:[-\s](?:{_WORD}))?\s+hundred(?:\s+(?:and\s+)?(?:{_WORD})(?:[-\s](?:{_WORD}))?)?"
    rf"|(?:{_WORD})(?:[-\s](?:{_WORD}))?)\b",
    re.IGNORECASE,
)
_SCALE_WORD = "|".join(sorted(SCALES, key=len, reverse=True))
_PERCENT = r"\s?(?:%|per\s?cent\b|percent(?:age\s+points?)?\b|pct\b)"
_DIGITS = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_NUMBER = re.compile(
    rf"(?<![\w.,/-])(?P<open>\()?[-−–]?(?P<digits>{_DIGITS})(?P<close>\))?"
    rf"(?P<glued>bn|k|m|b)?(?![\w/]|[.,-]\d)"
    rf"(?:\s?(?P<scale>{_SCALE_WORD})\b)?(?P<percent>{_PERCENT})?",
    re.IGNORECASE,
)
_WORD_QUANTITY = re.compile(
    rf"(?P<words>{_WORD_NUMBER.pattern})(?:\s(?P<scale>{_SCALE_WORD})\b)?(?P<percent>{_PERCENT})?", re.IGNORECASE
)
# Numeric dates: "10/11/96", "10-11-1996", "11.10.1996" (a dot only with a four-digit year: "4.2.10" is a clause).
_NUMERIC_DATE = re.compile(
    r"(?<![\w./-])(\d{1,2})([/-])(\d{1,2})\2(\d{4}|\d{2})(?![\w/-])|(?<![\w./-])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\w.])"
)


@dataclass(frozen=True)
class Quantity:
    """A figure found in text: its value (scale applied), the number as written (`mantissa`), whether it
    is a percentage, its precision (the value of one unit in its last written place), and where it is."""

    value: Decimal
    mantissa: Decimal
    percent: bool
    quantum: Decimal
    start: int
    end: int
    text: str

    @property
    def scaled(self) -> bool:
        """True when a scale word or letter multiplied the number as written."""
        return self.value != self.mantissa


def _decimal(digits: str) -> Decimal | None:
    try:
        return Decimal(digits.replace(",", ""))
    except InvalidOperation:
        return None


def word_number(words: str) -> int | None:
    """The value of a number written in words ("seventy-five" -> 75, "two hundred and ten" -> 210)."""
    total = current = 0
    seen = False
    for word in re.split(r"[-\s]+", words.casefold()):
        if word == "and" or not word:
            continue
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        else:
            return None
        seen = True
    return total + current if seen else None


def find_quantities(text: str) -> list[Quantity]:
    """Every figure of `text` in order: numbers with their scale word or letter applied, percentages
    (a `%`, "per cent", "percent"), accounting negatives ("(393)"), and numbers written in words.
    Digits inside dates, times and references ("2327/30", "4.2.1") are not figures."""
    found: list[Quantity] = []
    taken = [(start, end) for start, end, _ in find_numeric_dates(text)]
    for m in _NUMBER.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        number = _decimal(m.group("digits"))
        if number is None:
            continue
        # A lone "(" or ")" is punctuation; both around the number mean a negative amount.
        negative = bool(m.group("open") and m.group("close")) or m.group(0).lstrip("(").startswith(("-", "−", "–"))
        scale = Decimal(1)
        if m.group("scale"):
            scale = SCALES[m.group("scale").casefold()]
        elif m.group("glued"):
            scale = _GLUED[m.group("glued").casefold()]
        exponent = number.as_tuple().exponent
        places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        mantissa = -number if negative else number
        found.append(
            Quantity(
                value=mantissa * scale,
                mantissa=mantissa,
                percent=bool(m.group("percent")),
                quantum=Decimal(1).scaleb(-places) * scale,
                start=m.start(),
                end=m.end(),
                text=m.group(0).strip(),
            )
        )
    for m in _WORD_QUANTITY.finditer(text):
        value = word_number(m.group("words"))
        if value is None or any(q.start <= m.start() < q.end for q in found):
            continue
        scale = SCALES[m.group("scale").casefold()] if m.group("scale") else Decimal(1)
        found.append(
            Quantity(
                value=Decimal(value) * scale,
                mantissa=Decimal(value),
                percent=bool(m.group("percent")),
                quantum=scale,
                start=m.start(),
                end=m.end(),
                text=m.group(0),
            )
        )
    return sorted(found, key=lambda q: q.start)


def _rounded(value: Decimal, quantum: Decimal) -> Decimal:
    """`value` rounded half away from zero to a multiple of `quantum`."""
    if quantum <= 0:
        return value
    steps = (value / quantum).quantize(Decimal(1), rounding="ROUND_HALF_UP")
    return steps * quantum


def same_figure(wanted: Quantity, written: Quantity) -> bool:
    """Whether `written` states the figure `wanted`, to `wanted`'s precision.

    Values are compared with their scales ("$1,577 million" = "1.577 billion") and, for a figure
    written without its scale (a table "in millions"), as written; a more precise figure rounds to a
    less precise one ("15,338 million" states "$15.3 billion"), never the reverse. A sign written as
    parentheses or words may be missing on either side. A percentage only matches a percentage.
    """
    if wanted.percent and not written.percent:
        return False
    for ours, theirs, quantum in (
        (wanted.value, written.value, wanted.quantum),
        (
            wanted.mantissa,
            written.mantissa,
            wanted.quantum / (wanted.value / wanted.mantissa if wanted.mantissa else 1),
        ),
    ):
        for a, b in ((ours, theirs), (abs(ours), abs(theirs))):
            if _rounded(b, quantum) == a:
                return True
    return False


def find_numeric_dates(text: str) -> list[tuple[int, int, frozenset[date]]]:
    """(start, end, days) of every numeric date ("10/11/96"): each day it can mean (month first or day first)."""
    out: list[tuple[int, int, frozenset[date]]] = []
    for m in _NUMERIC_DATE.finditer(text):
        if m.group(1) is not None:
            first, second, year_text = m.group(1), m.group(3), m.group(4)
        else:
            first, second, year_text = m.group(5), m.group(6), m.group(7)
        year = int(year_text)
        if len(year_text) == 2:
            year += 1900 if year >= 50 else 2000
        days = set()
        for month, day in ((int(first), int(second)), (int(second), int(first))):
            try:
                days.add(date(year, month, day))
            except ValueError:
                continue
        if days:
            out.append((m.start(), m.end(), frozenset(days)))
    return out


def find_days(text: str) -> list[tuple[int, int, frozenset[date]]]:
    """(start, end, days) of every written date of `text`, in words or in figures, in order."""
    found = [(start, end, frozenset({day})) for start, end, day in find_dates(text)]
    found += find_numeric_dates(text)
    return sorted(found, key=lambda f: (f[0], -f[1]))


def dates_match(wanted: frozenset[date], written: Iterable[frozenset[date]]) -> bool:
    """Whether some written date can mean a day the wanted date can mean."""
    return any(wanted & days for days in written)


def figure_stated(wanted: Quantity, quantities: Collection[Quantity]) -> bool:
    """Whether any of `quantities` states `wanted` (see same_figure)."""
    return any(same_figure(wanted, q) for q in quantities)


def figures_outside_dates(text: str, words: bool = True) -> list[Quantity]:
    """The figures of `text` that are not part of a written date ("25 June 2022" holds no figure); only those
    written in digits when not `words` ("Three Months Ended" holds none then)."""
    spans = [(start, end) for start, end, _ in find_days(text)]
    return [q for q in find_quantities(text) if not any(s <= q.start < e for s, e in spans) and (words or in_digits(q))]


# Words that make the number after them a reference, not an amount ("Note 7", "clause 4.2", "Section 12").
_REFERENCE_WORD = re.compile(
    r"(?:\b(?:notes?|clauses?|sections?|articles?|paragraphs?|para|items?|parts?|schedules?|annex(?:es)?|exhibits?|"
    r"rules?|regulations?|pages?|pp?|chapters?|appendix|appendices)|§)\.?\s*$",
    re.IGNORECASE,
)
# A number that opens its sentence and is followed by a capitalised word reads as a clause number
# ("4.2 The Tenant shall ...", "12. Termination").
_CLAUSE_NUMBER = re.compile(r"^\s*\(?\d{1,3}(?:\.\d{1,3})?\)?\.?$")
_CAPITALISED_NEXT = re.compile(r"^[.)]?\s+[A-Z]")
# A dotted clause number ("2.1", "14.3") after a short heading at its sentence's start ("2. Deposit 2.1 On signing",
# "Term and rent 1.1 The term is"): the heading's words, with its own number, before the clause's.
_DOTTED_CLAUSE = re.compile(r"^\d{1,2}\.\d{1,2}$")
_HEADING_BEFORE = re.compile(r"^\s*(?:\d{1,3}\.?\s+)?[A-Z][A-Za-z'’&-]*(?:\s+[A-Za-z'’&-]+){0,5}\s+$")
# What a clause opens with: a capitalised word, then another word ("On signing", "The Tenant"), not a figure
# ("Diluted 2.10": the next cell of a row).
_CLAUSE_OPENING = re.compile(r"^\s+[A-Z][A-Za-z'’]*\s+[A-Za-z]")


def reference_kind(text: str, quantity: Quantity) -> str | None:
    """What a number of `text` is when it is not an amount: "a year" (1900-2099 written as four bare digits),
    "a clause or section number" or "a note reference" (after "Note", "clause", "Section", ..., a number
    opening its sentence before a capitalised word, or a dotted one between a short heading and a capitalised
    word: "2. Deposit 2.1 On signing"); None for an amount."""
    if quantity.percent or quantity.scaled:
        return None
    before = text[: quantity.start]
    written = quantity.text
    if re.fullmatch(r"(?:19|20)\d\d", written) and not re.search(r"[$€£¥]\s?$|\b[A-Z]{3}\s?$", before):
        return "a year"
    word = _REFERENCE_WORD.search(before[-16:])
    if word is not None:
        note = word.group(0).strip().casefold().startswith("note")
        return "a note reference" if note else "a clause or section number"
    if not before.strip() and _CLAUSE_NUMBER.match(written) and _CAPITALISED_NEXT.match(text[quantity.end :]):
        return "a clause or section number"
    if _DOTTED_CLAUSE.match(written) and _HEADING_BEFORE.match(before) and _CLAUSE_OPENING.match(text[quantity.end :]):
        return "a clause or section number"
    return None


def amount_figures(text: str) -> list[Quantity]:
    """The figures of `text` written in digits that are amounts: no date, year, clause or section number or
    note reference (what a computation may take as an operand)."""
    return [q for q in figures_outside_dates(text, words=False) if reference_kind(text, q) is None]


def in_digits(quantity: Quantity) -> bool:
    """Whether a figure is written in digits (not "seventy-five")."""
    return quantity.text.lstrip("(-−–.")[:1].isdigit()


def _references(text: str, spans: Iterable[tuple[int, int]]) -> set[str]:
    """Tokens with digits outside the given spans ("2327/30", "4.2.1", "A-7"): references stated verbatim."""
    blanked = list(text)
    for start, end in spans:
        blanked[start:end] = " " * (end - start)
    return {t for t in tokens("".join(blanked)) if any(c.isdigit() for c in t)}


def missing_values(claim: str, support: str, figures_too: bool = True) -> list[str]:
    """The figures, dates and references (numbered tokens such as "2327/30") that `claim` states and
    `support` does not, as written in `claim`; empty when `support` states every one of them. Without
    `figures_too`, only dates and references (the caller compares figures itself, as pipeline.values.figures does).

    Figures compare as values to the claim's precision (`same_figure`), dates by the days they can mean.
    """
    claim_days = find_days(claim)
    support_days = [days for _, _, days in find_days(support)]
    missing = [claim[s:e] for s, e, days in claim_days if not dates_match(days, support_days)]
    date_spans = [(s, e) for s, e, _ in claim_days]
    figures = [q for q in find_quantities(claim) if not any(s <= q.start < e for s, e in date_spans)]
    if figures_too:
        written = find_quantities(support)
        missing += [q.text for q in figures if not figure_stated(q, written)]
    spans = date_spans + [(q.start, q.end) for q in figures]
    support_refs = _references(support, [])
    missing += sorted(_references(claim, spans) - support_refs)
    return missing


def value_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` writes its dates and figures (what `missing_values` compares), in order."""
    days = [(s, e) for s, e, _ in find_days(text)]
    figures = [(q.start, q.end) for q in find_quantities(text) if not any(s <= q.start < e for s, e in days)]
    return sorted(days + figures)
