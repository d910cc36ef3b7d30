"""The condensed consolidated statements of operations of the SEC 10-Q filings, read from their text.

A filing's statement of operations is one of its first pages ("CONDENSED CONSOLIDATED STATEMENTS OF
OPERATIONS", "Consolidated Condensed Statements of Income", "INCOME STATEMENTS"). Its text, as the index
reads it, holds a header naming the periods (two columns: this quarter and the same quarter a year
earlier; four with the year-to-date columns) and one line per item: a label and one value per column
("Total net sales 117,154 123,945", "Other income/(expense), net (393) (247)"). `read_statement` finds
that page and parses it; `Statement.operand` gives one item's value for this quarter or the prior-year
quarter with the page and the words it was read from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from pipeline.errors import ExamplesError

# Where the statement can be: after the cover, the contents and at most a few other pages.
MAX_STATEMENT_PAGE = 12
_HEADING = re.compile(r"statements? of (?:operations|income)|income statements", re.IGNORECASE)
_VALUE = re.compile(r"^\(?\d[\d,]*(?:\.\d+)?\)?$")
_DASHES = frozenset({"—", "–", "-"})
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December",
)  # fmt: skip
_MONTH_DAY = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)[a-z]*\.?\s+(\d{1,2})\b")
_YEAR = re.compile(r"\b(20\d\d)\b")
# Lines of the column header that end in numbers but are no item ("Three Months Ended September 30, 2022 2021",
# "October 29, October 30,").
_HEADER_LINE = re.compile(
    r"ended|unaudited|in millions|^(?:"
    + "|".join(_MONTHS)
    + r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class LineItem:
    """One line of the statement: its section ("Net sales" for "Products" under "Net sales:"), label and
    values as printed, one per column."""

    section: str
    label: str
    printed: tuple[str, ...]


@dataclass(frozen=True)
class Operand:
    """A figure a filing reports: which item, for which quarter, where, and its value (in millions, as
    the statement states it)."""

    document: str
    page: int
    label: str
    period_end: str
    printed: str
    value: Decimal


@dataclass(frozen=True)
class Statement:
    """A filing's statement of operations: page, column years, this quarter's and the prior-year quarter's
    columns and end dates, and its items."""

    document: str
    page: int
    years: tuple[int, ...]
    current: int
    prior: int
    period_end: str
    prior_period_end: str
    items: tuple[LineItem, ...]

    def item(self, labels: Sequence[str], section: str | None = None) -> LineItem:
        """The one item with the first of `labels` found (case-insensitive) in `section` (any when None)."""
        for label in labels:
            found = [
                i
                for i in self.items
                if i.label.casefold() == label.casefold()
                and (section is None or i.section.casefold() == section.casefold())
            ]
            if len(found) > 1:
                raise ExamplesError(
                    f"{self.document} page {self.page}: {len(found)} lines named {label!r}: name its section"
                )
            if found:
                return found[0]
        where = f" in section {section!r}" if section else ""
        raise ExamplesError(f"{self.document} page {self.page}: no line named any of {list(labels)}{where}")

    def operand(self, labels: Sequence[str], section: str | None = None, column: str = "current") -> Operand:
        """The item's value for this quarter (`column` "current") or the same quarter a year earlier ("prior")."""
        item = self.item(labels, section)
        index = {"current": self.current, "prior": self.prior}[column]
        printed = item.printed[index]
        end = self.period_end if column == "current" else self.prior_period_end
        return Operand(self.document, self.page, item.label, end, printed, parse_value(printed))


def parse_value(printed: str) -> Decimal:
    """A printed statement value: "1,019" -> 1019, "(393)" -> -393, "—" -> 0."""
    if printed in _DASHES:
        return Decimal(0)
    if not _VALUE.match(printed):
        raise ExamplesError(f"not a statement value: {printed!r}")
    negative = printed.startswith("(")
    value = Decimal(printed.strip("()").replace(",", ""))
    return -value if negative else value


def split_line(line: str) -> tuple[str, tuple[str, ...]]:
    """(label, values) of a statement line: the values are its trailing numbers and dashes, "$" signs dropped."""
    tokens = line.split()
    values: list[str] = []
    while tokens and (tokens[-1] == "$" or tokens[-1] in _DASHES or _VALUE.match(tokens[-1])):
        token = tokens.pop()
        if token != "$":
            values.insert(0, token)
    return " ".join(tokens), tuple(values)


def _date(month: str, day: str, year: int) -> str:
    full = next(m for m in _MONTHS if m.startswith(month[:3]))
    return f"{full} {int(day)}, {year}"


def parse_statement(document: str, page: int, text: str) -> Statement | None:
    """The statement of operations on this page, or None when the page holds none."""
    if not _HEADING.search(text):
        return None
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    header: list[str] = []
    items: list[LineItem] = []
    section = ""
    for line in lines:
        label, values = split_line(line)
        is_item = len(values) >= 2 and re.search(r"[A-Za-z]", label) is not None and not _HEADER_LINE.search(label)
        if is_item:
            items.append(LineItem(section, label, values))
            continue
        if not items:
            header.append(line)
        if not values and label:
            section = label.rstrip(":")
    years = tuple(int(y) for y in _YEAR.findall(" ".join(header)))
    if len(years) not in (2, 4) or not items or any(len(i.printed) != len(years) for i in items[:3]):
        return None
    current = 0 if years[0] >= years[1] else 1
    prior = 1 - current
    # One month and day per column, or one for both years ("September 30," over "2022 2023").
    dates: list[tuple[str, str]] = _MONTH_DAY.findall(" ".join(header))
    if not dates:
        return None
    now, before = (dates[current], dates[prior]) if len(dates) >= 2 else (dates[0], dates[0])
    return Statement(
        document,
        page,
        years,
        current,
        prior,
        _date(*now, years[current]),
        _date(*before, years[prior]),
        tuple(i for i in items if len(i.printed) == len(years)),
    )


def read_statement(document: str, pages: Sequence[str]) -> Statement:
    """The filing's statement of operations (the first page holding one); ExamplesError when none does."""
    for number, text in enumerate(pages[:MAX_STATEMENT_PAGE], start=1):
        statement = parse_statement(document, number, text)
        if statement is not None:
            return statement
    raise ExamplesError(f"{document}: no statement of operations in its first {MAX_STATEMENT_PAGE} pages")
