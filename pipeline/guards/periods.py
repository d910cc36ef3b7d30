"""The period guard: a figure asked for a period stands only on pages that write that period.

A question naming a year, a quarter or a day ("in the fiscal year 2023", "as of June 30, 2023") is about that
period; a report of another year answers it with its own figures unless something checks. The check is exact:
some page an answer rests on must write the year of an asked period (as "2023", "FY2023", "FY23" or "fiscal
23"), whatever column or sentence the figure came from. A question asking for the latest period, or naming
none, is not checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.values.periods import AskedPeriods


def _year_pattern(year: int) -> re.Pattern[str]:
    short = f"{year % 100:02d}"
    return re.compile(rf"(?<![\w.,]){year}(?![\w,]|\.\d)|\bFY\s?'?(?:{year}|{short})\b|\bfiscal\s+'?{short}\b", re.I)


def written_periods(asked: AskedPeriods, pages: Sequence[str]) -> tuple[int, ...]:
    """The years of the asked periods that one of `pages` writes, in the order asked."""
    years = tuple(dict.fromkeys(p.year for p in asked.periods))
    return tuple(y for y in years if any(_year_pattern(y).search(page) for page in pages))


def period_problem(asked: AskedPeriods, pages: Sequence[str]) -> str | None:
    """Why an answer resting on `pages` does not answer the periods asked (None: it may): the question names
    periods and no page writes any of their years."""
    if not asked.periods or not pages or written_periods(asked, pages):
        return None
    years = ", ".join(dict.fromkeys(str(p.year) for p in asked.periods))
    return f"the pages it rests on are of no period asked ({years}): the documents do not cover it"
