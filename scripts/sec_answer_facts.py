"""The answer facts of the SEC 10-Q question set: amounts, percentages and dates read out of a reviewed
answer, checked against the numbers of the filings' pages, and the pages they locate."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from decimal import Decimal

from pipeline.evaluation.examples import GoldPage
from pipeline.evaluation.metrics import number_values

MAX_FACTS = 6
# A fact locates its evidence page when each of its numbers has at least this many digits (a "5%"
# or a "2" is on nearly every page of a filing) and it is on at most MAX_FACT_PAGES pages.
MIN_LOCATING_DIGITS = 3
MAX_FACT_PAGES = 4

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_NUM = r"\d[\d,]*(?:\.\d+)?"
_SCALE = r"(?:million|billion|thousand|trillion)\b"
# One alternation so matches come out in reading order; the group says which kind matched.
_FACT = re.compile(
    rf"(?P<money>\$\s?{_NUM}(?:\s?{_SCALE})?)"
    rf"|(?P<percent>{_NUM}\s?(?:%|percent\b|percentage points?\b|basis points?\b))"
    rf"|(?P<units>{_NUM}\s{_SCALE}(?:\s(?:shares|units|employees|customers)\b)?)"
    rf"|(?P<date>{_MONTH}\s\d{{1,2}},\s\d{{4}})",
)
_SOURCE_NOTE = re.compile(r"SOURCE\(S\):.*$|\(\s*SOURCE:[^)]*\)|\"?\d{4} Q\d [A-Z]{4}\.pdf\"?", re.MULTILINE)


def _canonical(value: Decimal) -> str:
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _stated(fact: str, known: AbstractSet[str]) -> bool:
    """Whether every number of `fact` occurs in `known`, allowing millions written as billions."""
    scale = {"billion": Decimal(1000), "million": Decimal("0.001")}.get(fact.split()[-1].casefold())
    for value in number_values(fact):
        forms = {value} if scale is None else {value, _canonical(Decimal(value) * scale)}
        if not forms & known:
            return False
    return True


def extract_facts(answer: str, limit: int = MAX_FACTS, known: AbstractSet[str] | None = None) -> tuple[str, ...]:
    """Up to `limit` facts of a reviewed answer, in reading order.

    Amounts, percentages and numbers with units are preferred to period dates. With `known`
    (the number values of the gold filings' text), facts whose numbers occur there ("$2.294
    billion" may be "2,294" in a table in millions) are preferred to figures the reviewer
    derived (sums, ratios); derived figures are dropped only when more than `limit` facts remain.
    """
    body = _SOURCE_NOTE.sub(" ", answer)
    ranked: list[tuple[int, int, int, str]] = []
    seen: set[str] = set()
    for match in _FACT.finditer(body):
        fact = re.sub(r"^\$\s", "$", " ".join(match.group().split()).rstrip(".,"))
        if fact.casefold() in seen:
            continue
        seen.add(fact.casefold())
        derived = known is not None and not _stated(fact, known)
        ranked.append((int(derived), int(match.lastgroup == "date"), match.start(), fact))
    if len(ranked) == 1 and ranked[0][1]:
        return ()
    kept = sorted(ranked)[:limit]
    return tuple(fact for *_, fact in sorted(kept, key=lambda item: item[2]))


def unverified_facts(facts: Sequence[str], known: AbstractSet[str]) -> list[str]:
    """The facts whose numbers do not all occur in `known` (derived or mistyped figures)."""
    return [f for f in facts if not _stated(f, known)]


def locates_page(fact: str) -> bool:
    """Whether a fact is specific enough to find its page by: a figure (no date) whose every number has
    at least MIN_LOCATING_DIGITS digits."""
    match = _FACT.fullmatch(fact)
    if match is not None and match.lastgroup == "date":
        return False
    numbers = number_values(fact)
    return bool(numbers) and all(len(n.replace(".", "")) >= MIN_LOCATING_DIGITS for n in numbers)


def gold_pages(
    facts: Sequence[str], documents: Sequence[str], pages: Mapping[str, Sequence[AbstractSet[str]]]
) -> tuple[GoldPage, ...]:
    """The pages of each gold filing that state one of the answer's locating facts (1-based, sorted).

    A fact found on more than MAX_FACT_PAGES pages of a filing is a common figure there and locates
    nothing; a filing none of whose facts is located gets no gold page (any page may hold the answer).
    """
    out: list[GoldPage] = []
    for document in documents:
        found: set[int] = set()
        for fact in (f for f in facts if locates_page(f)):
            on = [number for number, known in enumerate(pages[document], start=1) if _stated(fact, known)]
            if len(on) <= MAX_FACT_PAGES:
                found.update(on)
        out.extend(GoldPage(document=document, page=page) for page in sorted(found))
    return tuple(out)
