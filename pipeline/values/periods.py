"""Dates and reporting periods in text: what a question asks for ("FY2018", "Q2 2023", "as of
December 31, 2021", "the latest report") and what a document covers (its period attributes).

Pure functions. A period is a year, a quarter of a year or a day; a question's period matches a
document that states the same one, and a day or a year also matches a document that only states a
period containing it. Fiscal and calendar quarters are not told apart: a document's quarter is what
its attributes call it (a corpus that files "2023 Q1" for a fiscal quarter names it so).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

_MONTH_NAMES = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, start=1) for name in names}
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_MDY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")

_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_YEAR = r"(?:19|20)\d\d"
# Two-digit years only after an apostrophe or "FY" ("Q2'23", "FY23"): "Q3 10" is no year.
_SHORT_YEAR = rf"{_YEAR}|'\d\d|(?<=FY)\d\d|(?<=FY )\d\d"
_QUARTERS = (
    # "Q2 2023", "Q2 of 2023", "Q2 FY23", "Q2 fiscal 2023", "Q2-2023", "Q2'23"
    re.compile(rf"\bQ([1-4])(?:\s*[-/]?\s*|\s+of\s+|\s+)(?:FY\s*|fiscal\s+(?:year\s+)?)?({_SHORT_YEAR})\b", re.I),
    # "2023 Q2", "FY2023 Q2", "2023-Q2"
    re.compile(rf"\b(?:FY\s*)?({_YEAR}|(?<=FY)\d\d|(?<=FY )\d\d)\s*[-/ ]?\s*Q([1-4])\b", re.I),
    # "the second quarter of 2023", "second fiscal quarter of fiscal 2023", "third quarter 2022"
    re.compile(
        rf"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?"
        rf"(?:fiscal\s+(?:year\s+)?|FY\s*)?({_SHORT_YEAR})\b",
        re.I,
    ),
)
_FISCAL_YEAR = re.compile(rf"\b(?:FY\s*|fiscal\s+(?:year\s+)?)({_SHORT_YEAR})\b", re.I)
_BARE_YEAR = re.compile(rf"(?<![\w.,$/-])({_YEAR})(?![\w.,%/-]|\.\d)")
_LATEST = re.compile(r"\b(?:latest|most\s+recent|newest)\b", re.I)
# A question that sets its period against others ("compared to previous quarters", "over time").
_OTHERS = re.compile(
    r"\b(?:previous|prior|past|preceding|earlier|other)\s+(?:quarters?|periods?|years?|filings?|reports?|ones)\b"
    r"|\bover\s+time\b|\bacross\s+(?:the\s+|all\s+)?(?:quarters|periods|years|filings|reports)\b",
    re.I,
)

PeriodKind = Literal["year", "quarter", "day"]
LATEST = "latest"
OTHERS = "others"


@dataclass(frozen=True, order=True)
class Period:
    """A year, a quarter of a year, or a day."""

    kind: PeriodKind
    year: int
    quarter: int = 0
    day: date | None = None

    @property
    def label(self) -> str:
        """Canonical text: "2023", "2023-Q2", "2021-12-31"."""
        if self.kind == "day" and self.day is not None:
            return self.day.isoformat()
        return f"{self.year}-Q{self.quarter}" if self.kind == "quarter" else str(self.year)

    @property
    def end(self) -> date:
        """The last day the period covers (what "latest" compares)."""
        if self.kind == "day" and self.day is not None:
            return self.day
        month = 3 * self.quarter if self.kind == "quarter" else 12
        return date(self.year, month, 30 if month in (6, 9) else 31)

    def contains(self, day: date) -> bool:
        """Whether `day` falls in this period (calendar quarters)."""
        if self.kind == "day":
            return self.day == day
        if self.kind == "year":
            return day.year == self.year
        return day.year == self.year and (day.month - 1) // 3 + 1 == self.quarter


@dataclass(frozen=True)
class AskedPeriods:
    """The periods a question names, whether it asks for the latest one, and whether it sets them
    against other periods (then their documents are preferred, never the only ones read)."""

    periods: tuple[Period, ...] = ()
    latest: bool = False
    others: bool = False

    @property
    def labels(self) -> tuple[str, ...]:
        """Canonical labels, then "latest" and "others" when asked: how a plan records them."""
        flags = ((LATEST,) if self.latest else ()) + ((OTHERS,) if self.others else ())
        return (*(p.label for p in self.periods), *flags) if self else ()

    def __bool__(self) -> bool:
        return bool(self.periods) or self.latest


def find_dates(text: str) -> list[tuple[int, int, date]]:
    """(start, end, day) of every valid written date: "25 June 2022", "June 25, 2022", "2022-06-25"."""
    found: list[tuple[int, int, date]] = []
    for pattern, order in ((_DMY, "dmy"), (_MDY, "mdy"), (_ISO, "ymd")):
        for m in pattern.finditer(text):
            a, b, c = m.groups()
            try:
                if order == "dmy":
                    day = date(int(c), MONTHS[b.casefold()], int(a))
                elif order == "mdy":
                    day = date(int(c), MONTHS[a.casefold()], int(b))
                else:
                    day = date(int(a), int(b), int(c))
            except ValueError:
                continue
            found.append((m.start(), m.end(), day))
    return sorted(found, key=lambda f: (f[0], -f[1]))


def _year(text: str) -> int:
    digits = text.lstrip("'")
    return int(digits) if len(digits) == 4 else 2000 + int(digits)


def find_periods(text: str) -> AskedPeriods:
    """The periods `text` names, in order, without repeats: quarters, days, fiscal and bare years;
    a year inside a quarter or a date is not named again on its own."""
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    for index, pattern in enumerate(_QUARTERS):
        for m in pattern.finditer(text):
            if not free(m.start(), m.end()):
                continue
            first, second = m.groups()
            quarter, year = (
                (int(first), _year(second))
                if index == 0
                else (int(second), _year(first))
                if index == 1
                else (_ORDINALS[first.casefold()], _year(second))
            )
            found.append((m.start(), Period("quarter", year, quarter)))
            taken.append((m.start(), m.end()))
    for start, end, day in find_dates(text):
        if free(start, end):
            found.append((start, Period("day", day.year, 0, day)))
            taken.append((start, end))
    for pattern in (_FISCAL_YEAR, _BARE_YEAR):
        for m in pattern.finditer(text):
            if free(m.start(), m.end()):
                found.append((m.start(), Period("year", _year(m.group(1)))))
                taken.append((m.start(), m.end()))
    periods = tuple(dict.fromkeys(p for _, p in sorted(found, key=lambda f: f[0])))
    return AskedPeriods(periods, bool(_LATEST.search(text)), bool(_OTHERS.search(text)))


def parse_period(value: str) -> Period | None:
    """The one period an attribute value states ("2023 Q1", "FY2023", "2022", "2022-06-25"), else None."""
    asked = find_periods(value)
    return asked.periods[0] if len(asked.periods) == 1 else None


def document_periods(attributes: Iterable[tuple[str, str]]) -> tuple[Period, ...]:
    """The periods a document's attribute values state, one per value that states exactly one."""
    return tuple(dict.fromkeys(p for _, value in attributes if (p := parse_period(value)) is not None))


def period_matches(asked: Period, held: Sequence[Period]) -> bool:
    """Whether a document holding the periods `held` covers the asked period.

    The same kind must agree when the document states one (its quarter answers for a quarter, its
    day for a day); otherwise a day or a year falls inside a longer or shorter period it states.
    """
    same = [p for p in held if p.kind == asked.kind]
    if asked.kind == "year":
        return any(p.year == asked.year for p in held)
    if same:
        return asked in same
    if asked.kind == "day" and asked.day is not None:
        return any(p.contains(asked.day) for p in held)
    return any(asked.contains(p.day) for p in held if p.kind == "day" and p.day is not None)


def latest_end(held: Sequence[Period]) -> date | None:
    """The last day the document's periods reach (None: it states no period)."""
    return max((p.end for p in held), default=None)


def asked_from_labels(labels: Sequence[str]) -> AskedPeriods:
    """The AskedPeriods a plan's period labels stand for (unreadable labels are left out)."""
    flags = (LATEST, OTHERS)
    periods = tuple(p for label in labels if label not in flags and (p := parse_period(label)) is not None)
    return AskedPeriods(periods, LATEST in labels, OTHERS in labels)


def preferred_documents(
    asked: AskedPeriods, held: Mapping[str, Sequence[Period]], groups: Mapping[str, str]
) -> frozenset[str]:
    """Ids of the documents (keys of `held`) that cover an asked period; for "latest", also the
    documents that reach furthest within their group (`groups`: document id -> e.g. its owner)."""
    found = {d for d, periods in held.items() if any(period_matches(a, periods) for a in asked.periods)}
    if asked.latest:
        ends = {d: end for d, periods in held.items() if (end := latest_end(periods)) is not None}
        last: dict[str, date] = {}
        for d, end in ends.items():
            group = groups.get(d, "")
            last[group] = max(end, last.get(group, end))
        found |= {d for d, end in ends.items() if end == last[groups.get(d, "")]}
    return frozenset(found)
