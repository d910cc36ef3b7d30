"""What a table's column header says about its period: the day it ends, its year, and how many months it
spans ("Three Months Ended July 1, 2023" -> 2023-07-01, 3 months; "Year ended 31 December 2022" -> 12;
"2023" -> the year 2023; "December 31, 2022" -> a balance at that day). Pure functions."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from pipeline.values.periods import Period, find_dates

_MONTH_WORDS = {
    "one": 1,
    "three": 3,
    "six": 6,
    "nine": 9,
    "twelve": 12,
    "3": 3,
    "6": 6,
    "9": 9,
    "12": 12,
}
_SPAN = re.compile(
    r"\b(?P<months>one|three|six|nine|twelve|3|6|9|12)[\s-]+months?\b|\b(?P<weeks>13|26|39|52|53)[\s-]+weeks?\b"
    r"|\b(?P<quarter>quarters?|qtr)\b|\b(?P<year>years?|fiscal|fy|annual|twelve-month)\b|\b(?P<half>half[- ]year|"
    r"six[- ]month|h1|h2|interim)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?<![\d,.$])(?:FY\s*|fiscal\s+(?:year\s+)?)?((?:19|20)\d\d)(?![\d,%])", re.IGNORECASE)
_SHORT_FY = re.compile(r"\bFY\s?'?(\d\d)\b", re.IGNORECASE)
_WEEK_MONTHS = {"13": 3, "26": 6, "39": 9, "52": 12, "53": 12}


@dataclass(frozen=True)
class ColumnPeriod:
    """The period of a column: the day it ends (None when the header gives only a year), its year, and the
    months it spans (None: a balance at a day, or not stated)."""

    end: date | None = None
    year: int | None = None
    months: int | None = None

    @property
    def known(self) -> bool:
        return self.end is not None or self.year is not None

    def sort_key(self) -> tuple[int, int, int]:
        """Later first when sorted descending: by end day, else by year."""
        if self.end is not None:
            return (self.end.year, self.end.month, self.end.day)
        return (self.year or 0, 12, 31)


def column_period(header: str) -> ColumnPeriod:
    """The period a column header states (see the module docstring); an empty ColumnPeriod when it states
    none."""
    days = [d for _, _, d in find_dates(header)]
    end = days[-1] if days else None
    year = end.year if end else None
    if year is None:
        years = [int(y) for y in _YEAR.findall(header)]
        if not years and (m := _SHORT_FY.search(header)):
            years = [2000 + int(m.group(1))]
        year = years[-1] if years else None
    months: int | None = None
    for m in _SPAN.finditer(header):
        if m.group("months"):
            months = _MONTH_WORDS[m.group("months").casefold()]
        elif m.group("weeks"):
            months = _WEEK_MONTHS[m.group("weeks")]
        elif m.group("half"):
            months = 6
        elif m.group("quarter"):
            months = months or 3
        elif m.group("year"):
            months = months or 12
    return ColumnPeriod(end, year, months)


def matches_period(column: ColumnPeriod, asked: Period) -> bool:
    """Whether a column's period is the asked one: the same day, a column ending in the asked year (a year or
    a year-long column), or the asked quarter's three months."""
    if asked.kind == "day" and asked.day is not None:
        return column.end == asked.day or (column.end is None and column.year == asked.day.year)
    if asked.kind == "year":
        return column.year == asked.year and column.months in (None, 12)
    if column.end is None:
        return False
    in_quarter = column.end.year == asked.year and (column.end.month - 1) // 3 + 1 == asked.quarter
    return in_quarter and column.months in (None, 3)
