"""Inline XBRL as an HTML filing carries it: reported figures (facts) with their concept, value, unit and
period, and the cover-page facts that say whose report it is, of which form and for which period.

Pure functions over the strings the HTML reader found (pipeline.store.html reads the file).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from pipeline.errors import FactRefused

# Number words an "ixt-sec:numwordsen" figure may be written with ("no", "three").
_NUMBER_WORDS = {
    word: index
    for index, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
        " seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS.update({"no": 0, "none": 0})
_DIGITS = re.compile(r"[^\d.,]")
# The powers of ten a fact's `scale` may state: filings use -2 (percentages) to 9 (billions); anything past
# this is no reporting scale, and computing it would write a number of as many digits.
MAX_SCALE = 24
# Digits a fact's value may have, its scale applied (a reported figure has a few dozen at most).
MAX_VALUE_DIGITS = 40
# Characters of a fact's concept name, unit and decimals kept; a longer one is no XBRL name.
MAX_NAME_CHARS = 200
_MONTHS = "January February March April May June July August September October November December".split()


@dataclass(frozen=True)
class Context:
    """An XBRL context: its period (an instant has only `end`) and its dimensions ("axis=member")."""

    start: str | None
    end: str | None
    dimensions: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageFact:
    """A figure the filing tags where it is printed: concept, value as reported (scale applied, sign
    kept), the text shown, its unit and period, and the page it stands on (1-based)."""

    page: int
    concept: str
    value: str
    shown: str
    scale: int
    unit: str | None
    period_start: str | None
    period_end: str | None
    dimensions: tuple[str, ...] = ()
    decimals: str | None = None


@dataclass(frozen=True)
class Cover:
    """What the cover page's facts (dei:...) say about the filing; None where it says nothing."""

    registrant: str | None = None
    form: str | None = None
    period_start: str | None = None
    period_end: str | None = None
    fiscal_year: str | None = None
    fiscal_period: str | None = None
    tickers: tuple[str, ...] = field(default_factory=tuple)

    @property
    def found(self) -> bool:
        """Whether the cover names the registrant and the form (enough for a title)."""
        return bool(self.registrant and self.form)


def fact_value(
    shown: str, format_name: str | None, scale: str | None, sign: str | None, concept: str = "fact"
) -> str | None:
    """The reported value of a figure as a plain decimal ("-45754000000"), None when the text is not a
    number in the format it names (an unknown transformation, an empty nil figure). FactRefused when its scale
    is no integer within +-MAX_SCALE or its value has more than MAX_VALUE_DIGITS digits (the fact is dropped)."""
    try:
        exponent = int(scale) if scale else 0
    except ValueError:  # also a scale of more digits than Python reads as an int
        raise FactRefused(concept, f"scale {str(scale)[:20]!r} is no integer") from None
    if abs(exponent) > MAX_SCALE:
        raise FactRefused(concept, f"scale {exponent} is outside -{MAX_SCALE}..{MAX_SCALE}")
    text = " ".join(shown.split())
    fmt = (format_name or "").rsplit(":", 1)[-1].casefold().replace("-", "")
    if fmt in ("fixedzero", "zerodash"):
        number = Decimal(0)
    elif fmt == "numwordsen":
        words = text.casefold().replace("-", " ").split()
        if len(words) != 1 or words[0] not in _NUMBER_WORDS:
            return None
        number = Decimal(_NUMBER_WORDS[words[0]])
    else:
        digits = _DIGITS.sub("", text)
        if fmt in ("numcommadecimal", "numcomma"):
            digits = digits.replace(".", "").replace(",", ".")
        else:
            digits = digits.replace(",", "")
        if not digits or digits == ".":
            return None
        if len(digits) > MAX_VALUE_DIGITS + 1:
            raise FactRefused(concept, f"a value of {len(digits):,} digits is longer than {MAX_VALUE_DIGITS}")
        try:
            number = Decimal(digits)
        except InvalidOperation:
            return None
    number = number.scaleb(exponent)
    if sign == "-":
        number = -number
    value = canonical_decimal(number)
    if sum(c.isdigit() for c in value) > MAX_VALUE_DIGITS:
        raise FactRefused(concept, f"its value scaled by 10^{exponent} has more than {MAX_VALUE_DIGITS} digits")
    return value


def canonical_decimal(number: Decimal) -> str:
    """`number` in plain notation without trailing zeros ("45754000000", "1.5", "0")."""
    text = f"{number:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def unit_name(measures: tuple[str, ...], denominator: tuple[str, ...] = ()) -> str:
    """A unit as text: a currency code, "shares", "<currency>/shares" (namespace prefixes dropped)."""

    def plain(parts: tuple[str, ...]) -> str:
        return "*".join(p.rsplit(":", 1)[-1] for p in parts)

    return f"{plain(measures)}/{plain(denominator)}" if denominator else plain(measures)


def written_date(iso: str | None) -> str | None:
    """ "2023-07-01" -> "July 1, 2023" (None for anything else)."""
    try:
        day = date.fromisoformat(iso or "")
    except ValueError:
        return None
    return f"{_MONTHS[day.month - 1]} {day.day}, {day.year}"


def cover_from_facts(facts: Mapping[str, tuple[str, str]], contexts: Mapping[str, Context]) -> Cover:
    """The Cover of a filing from its dei facts (concept -> (text, context id), first occurrence)."""

    def text(concept: str) -> str | None:
        found = facts.get(concept)
        value = " ".join(found[0].split()) if found else ""
        return value or None

    form_fact = facts.get("dei:DocumentType")
    context = contexts.get(form_fact[1]) if form_fact else None
    tickers = tuple(dict.fromkeys(t for t in (text("dei:TradingSymbol") or "").replace(",", " ").split() if t))
    return Cover(
        registrant=text("dei:EntityRegistrantName"),
        form=text("dei:DocumentType"),
        period_start=context.start if context else None,
        period_end=(context.end if context else None) or _iso_day(text("dei:DocumentPeriodEndDate")),
        fiscal_year=text("dei:DocumentFiscalYearFocus"),
        fiscal_period=text("dei:DocumentFiscalPeriodFocus"),
        tickers=tickers,
    )


_WRITTEN_DAY = re.compile(r"([A-Za-z]+)\s+(\d{1,2}),?\s+(\d{4})")


def _iso_day(text: str | None) -> str | None:
    """ "July 1, 2023" -> "2023-07-01" (None when it is no such date)."""
    m = _WRITTEN_DAY.fullmatch(text or "")
    if m is None:
        return None
    names = [n.casefold() for n in _MONTHS]
    month = m.group(1).casefold()
    if month not in names:
        return None
    try:
        return date(int(m.group(3)), names.index(month) + 1, int(m.group(2))).isoformat()
    except ValueError:
        return None


def _kind(cover: Cover) -> tuple[str, str]:
    """(what the report is, how its period is said) from the fiscal period it states: "FY" an annual
    report for a fiscal year, "Q1".."Q4" a quarterly report, else a report for a period."""
    focus = (cover.fiscal_period or "").upper()
    if focus == "FY":
        return "annual report", "fiscal year ended"
    if re.fullmatch(r"Q[1-4]", focus):
        return "quarterly report", "quarterly period ended"
    return "report", "period ended"


def cover_title(cover: Cover) -> str | None:
    """ "Acme Widgets Inc. Form 10-X for the quarterly period ended July 1, 2023" (None without registrant
    and form)."""
    if not cover.found:
        return None
    ended = written_date(cover.period_end)
    return f"{cover.registrant} Form {cover.form}" + (f" for the {_kind(cover)[1]} {ended}" if ended else "")


def cover_summary(cover: Cover) -> str | None:
    """One sentence: the report's kind, form, registrant, tickers, period and fiscal period."""
    if not cover.found:
        return None
    ended = written_date(cover.period_end)
    tickers = f" ({', '.join(cover.tickers)})" if cover.tickers else ""
    period = f" for the period ended {ended}" if ended else ""
    fiscal = ""
    if cover.fiscal_year:
        quarter = cover.fiscal_period if cover.fiscal_period and cover.fiscal_period.upper().startswith("Q") else ""
        fiscal = f", fiscal year {cover.fiscal_year}" + (f" {quarter.upper()}" if quarter else "")
    kind = _kind(cover)[0].capitalize()
    return f"{kind} on Form {cover.form} of {cover.registrant}{tickers}{period}{fiscal}."


def cover_attributes(cover: Cover) -> dict[str, str]:
    """Document attributes from the cover: form, period end (ISO), fiscal year ("FY2023") and, for a
    quarter, the fiscal quarter ("2023 Q3"): what pipeline.values.periods reads to match a question's period."""
    out: dict[str, str] = {}
    if cover.form:
        out["form"] = cover.form
    if cover.period_end:
        out["period_end"] = cover.period_end
    year = cover.fiscal_year if cover.fiscal_year and re.fullmatch(r"\d{4}", cover.fiscal_year) else None
    if year:
        out["fiscal_year"] = f"FY{year}"
        period = (cover.fiscal_period or "").upper()
        if re.fullmatch(r"Q[1-4]", period):
            out["fiscal_period"] = f"{year} {period}"
    return out
