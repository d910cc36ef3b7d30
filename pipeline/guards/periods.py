"""The period guard: a figure asked for a period stands only on pages that write that period.

A question naming a year, a quarter or a day ("in the fiscal year 2023", "as of June 30, 2023") is about that
period; a report of another year answers it with its own figures unless something checks. The check is exact:
some page an answer rests on must write the year of an asked period (as "2023", "FY2023", "FY23" or "fiscal
23"), whatever column or sentence the figure came from. A fiscal year need not end in its calendar year: a
day asked in the first months of a year may be written as the fiscal year before ("January 28, 2024" is
"Fiscal 2023"), a fiscal year asked may be written by a day in the first months of the next, and a quarter of
a fiscal year asked as such ("the first quarter of fiscal 2024") by the calendar year before it (a quarter
ended September 30, 2023). A question asking for the latest period, or naming none, is not checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.values.periods import AskedPeriods, Period, find_dates

# The last month of a year whose days may close the fiscal year before (retailers' years end in January).
FISCAL_SPILL_MONTH = 3


def _year_pattern(year: int) -> re.Pattern[str]:
    short = f"{year % 100:02d}"
    return re.compile(rf"(?<![\w.,]){year}(?!\w|[.,]\d)|\bFY\s?'?(?:{year}|{short})\b|\bfiscal\s+'?{short}\b", re.I)


def _writes(period: Period, page: str, fiscal: bool = False) -> bool:
    """Whether `page` writes `period` (see the module docstring); `fiscal`: the period is asked as a fiscal one."""
    if _year_pattern(period.year).search(page):
        return True
    if period.kind == "quarter" and fiscal:
        return bool(_year_pattern(period.year - 1).search(page))
    if period.kind == "day" and period.day is not None and period.day.month <= FISCAL_SPILL_MONTH:
        return bool(_year_pattern(period.year - 1).search(page))
    if period.kind == "year":
        return any(d.year == period.year + 1 and d.month <= FISCAL_SPILL_MONTH for _, _, d in find_dates(page))
    return False


def written_periods(asked: AskedPeriods, pages: Sequence[str], fiscal: bool = False) -> tuple[Period, ...]:
    """The asked periods that one of `pages` writes, in the order asked."""
    return tuple(p for p in asked.periods if any(_writes(p, page, fiscal) for page in pages))


def period_problem(asked: AskedPeriods, pages: Sequence[str], fiscal: bool = False) -> str | None:
    """Why an answer resting on `pages` does not answer the periods asked (None: it may): the question names
    periods and no page writes any of them. `fiscal`: the question names its periods as fiscal ones."""
    if not asked.periods or not pages or written_periods(asked, pages, fiscal):
        return None
    years = ", ".join(dict.fromkeys(str(p.year) for p in asked.periods))
    return f"the pages it rests on are of no period asked ({years}): the documents do not cover it"
