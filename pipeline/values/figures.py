"""A figure as its sentence means it: the number with its sign, its scale, its currency and the period it is
counted per (pure functions). Two figures state the same thing only when all of these agree, not when their
digits do: "EUR -2,500", "(2,500)", "a loss of 2,500", "2,500 million", "GBP 2,500" and "2,500 per year" each say
something else than "EUR 2,500 per month".

- Sign: a minus (before the figure, or glued before its currency: "-$81,797", "\u2212EUR 5"), accounting brackets,
  or a loss word ("loss", "deficit", "minus") before the figure in its clause (or just after it) makes it
  negative; a label that names both ways ("Net income (loss)") leaves the sign to the figure's own marks. A
  figure in a row of bare cells has its row's sign word.
- Scale: a figure's own scale word ("million", "bn", "1.2m"), else the scale its table's note states for bare
  figures ("(In millions)"). A bare figure matches another bare figure as written (a table copied as printed),
  never one that states its own scale ("$81,797" is not "$81,797 million").
- Currency: a sign or code next to the figure ("$", "US$", "EUR", "NGN"), a currency word after it ("euros"),
  else its table's note ("(in thousands of euros)"), else the one currency its passage names throughout.
- Period: "per month", "a year", "monthly", "p.a." or the span it is counted over ("for the year", "for the
  three months ended ...") after the figure, or "monthly", "annual" before it.

Matching (`states`) is what a claim needs from the figure that supports it: what the claim says of its sign,
scale, currency and period must be what the support says; a claim may leave out a currency or a period its
support names, never add or change one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from pipeline.values.money import CODES, Scale, currency_of, table_units
from pipeline.values.quantities import SCALES, Quantity, find_days, find_quantities, reference_kind

# Words that make a figure a loss; a clause holding one of the others as well names both ways ("income (loss)").
_LOSS = re.compile(r"\b(?:loss(?:es)?|deficits?|negative|minus|shortfalls?)\b", re.IGNORECASE)
_GAIN = re.compile(r"\b(?:income|incomes|profits?|gains?|earnings|surplus(?:es)?|positive)\b", re.IGNORECASE)
# Words that may stand between a loss word and its figure ("loss was $", "deficit of EUR", "loss for the year").
_LINKING = re.compile(
    r"^(?:\(?(?:of|was|were|is|are|amounted|amounting|totaled|totalled|totalling|totaling|to|a|an|the|net|for|in|at|"
    r"reported|approximately|about|around|some|year|period|quarter|\$|[A-Z]{3}|[$€£¥]|[-–—|:])\)?[,:]?)$",
    re.IGNORECASE,
)
# Where the words a figure's sign and period are read from end: a clause boundary.
_CLAUSE_END = re.compile(r"[;:.!?](?:\s|$)|,\s(?:and|but|while|whereas|compared)\b|\bcompared\s+(?:with|to)\b")
# Words read before a figure (at most) and after it, for its sign, currency and period.
BEFORE_WORDS = 8
AFTER_WORDS = 4
_SIGNS = ("US$", "U.S.$", "A$", "AU$", "C$", "CA$", "HK$", "NZ$", "S$", "NT$", "R$", "MX$", "$", "€", "£", "¥", "₹")
_SIGN_BEFORE = re.compile(r"(?:" + "|".join(re.escape(s) for s in _SIGNS) + r")\s?\(?$")
# A minus glued to the currency written before a figure ("-$81,797", "\u2212EUR 5", "(-$5)"): the figure's sign. A
# dash with a space after it ("Revenue - $81,797") separates a label from its figure.
_MINUS_BEFORE_MONEY = re.compile(
    r"(?:^|[\s(])[-\u2212\u2013](?:" + "|".join(re.escape(s) for s in _SIGNS) + r"|[A-Z]{3}\s?)\s?\(?$"
)
# A three-letter code written in capitals right before a figure ("EUR 2,500", "GBP 1.2 million"): any such code is
# a currency there, whether or not it is an ISO code (contracts write local abbreviations that ISO 4217 lacks).
_CODE_BEFORE = re.compile(r"(?<![A-Za-z])([A-Z]{3})\.?\s?\(?$")
_CODE_AFTER = re.compile(r"^\)?\s?([A-Z]{3})\b")
# The words just after a figure that may name its currency ("285,000 euros", "1.2 million Swiss francs").
_WORDS_AFTER = re.compile(r"^\)?\s?((?:[A-Z][a-z]+\s)?[A-Za-z]+)")
_PERIOD_WORDS = {
    "month": "month",
    "monthly": "month",
    "p.m.": "month",
    "pm": "month",
    "year": "year",
    "annum": "year",
    "annual": "year",
    "annually": "year",
    "yearly": "year",
    "p.a.": "year",
    "pa": "year",
    "quarter": "quarter",
    "quarterly": "quarter",
    "week": "week",
    "weekly": "week",
    "fortnight": "fortnight",
    "fortnightly": "fortnight",
    "day": "day",
    "daily": "day",
    "hour": "hour",
    "hourly": "hour",
    "half-year": "half-year",
    "half year": "half-year",
}
_PERIOD_AFTER = re.compile(
    r"^\)?\s?(?:[A-Za-z]{3,9}\s)?(?:(?:per|a|an|each|every|/)\s*(?:calendar\s+)?(month|year|annum|quarter|week|fortnight"
    r"|day|hour)\b|(monthly|annually|yearly|quarterly|weekly|fortnightly|daily|hourly)\b|(p\.\s?[am]\.))",
    re.IGNORECASE,
)
# "for the year", "for the quarter", "for the three months ended ...", "for fiscal 2023" after a figure: the span it
# is counted over.
_PERIOD_FOR = re.compile(
    r"^\)?\s?(?:[A-Za-z]{3,9}\s)?(?:for|in|during|over)\s+(?:the\s+)?(?:(?:fiscal|full|financial|calendar|whole|"
    r"entire|current|same|prior|previous|last)\s+)?(?:(year|quarter|half[- ]year|month)\b"
    r"|(three|six|nine|twelve|3|6|9|12)[\s-]+months?\b)",
    re.IGNORECASE,
)
_MONTHS_SPAN = {"three": "quarter", "3": "quarter", "six": "half-year", "6": "half-year", "nine": "nine months"}
_MONTHS_SPAN.update({"9": "nine months", "twelve": "year", "12": "year"})
_PERIOD_BEFORE = re.compile(r"\b(monthly|annual|yearly|quarterly|weekly|fortnightly|daily|hourly)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Passage:
    """A sentence a claim may rest on, with what its passage says of its bare figures: the scale and currency its
    table's note states, and the one currency the passage names throughout (all None when unknown)."""

    text: str
    scale: Scale | None = None
    currency: str | None = None


def passage(text: str, context: str = "") -> Passage:
    """`text` with what `context` (the chunk or page it is quoted from) says of its bare figures: its table note's
    scale and currency ("(In millions)", "(in thousands of euros)"), else the one currency the context names."""
    scale, currency = table_units(context) if context else (None, None)
    if currency is None and context:
        named = {c for c in (_currency_near(context, q) for q in find_quantities(context)) if c}
        currency = next(iter(named)) if len(named) == 1 else None
    return Passage(text, scale, currency)


@dataclass(frozen=True)
class Figure:
    """A figure of a sentence as the sentence means it: the number, whether it is negative, the scale that applies
    to it (its own or its table's; None when it is a bare count of units), its currency and the period it is
    counted per (None when the sentence names none)."""

    quantity: Quantity
    negative: bool
    table_scale: Decimal | None
    currency: str | None
    period: str | None

    @property
    def text(self) -> str:
        return self.quantity.text

    @property
    def magnitude(self) -> Decimal:
        """The figure's size with the scale that applies to it (its own, else its table's)."""
        if self.quantity.scaled or self.table_scale is None:
            return abs(self.quantity.value)
        return abs(self.quantity.mantissa) * self.table_scale


def read_figures(source: Passage | str) -> list[Figure]:
    """The figures of a sentence outside its dates, each with its sign, scale, currency and period."""
    given = source if isinstance(source, Passage) else Passage(source)
    text = given.text
    days = [(start, end) for start, end, _ in find_days(text)]
    figures: list[Figure] = []
    previous_end = 0
    previous_loss: bool | None = None
    for q in find_quantities(text):
        if any(s <= q.start < e for s, e in days):
            continue
        before = _clause_before(text, q.start, previous_end)
        loss = _loss_word(before, text[q.end :])
        if loss is None and not re.search(r"[A-Za-z]", text[previous_end : q.start]) and previous_end:
            loss = previous_loss  # a row of bare cells: its label's sign word holds for each
        negative = q.value < 0 or bool(loss) or bool(_MINUS_BEFORE_MONEY.search(text[max(0, q.start - 12) : q.start]))
        table = SCALES[given.scale] if given.scale and not q.scaled and not q.percent else None
        currency = None if q.percent else (_currency_near(text, q) or given.currency)
        figures.append(Figure(q, negative, table, currency, None if q.percent else _period(text, q, before)))
        previous_end, previous_loss = q.end, loss
    return figures


def _clause_before(text: str, start: int, floor: int) -> str:
    """The words of `text` before `start` in the same clause, no further back than `floor` (the previous figure's
    end) and BEFORE_WORDS words."""
    window = text[floor:start]
    ends = list(_CLAUSE_END.finditer(window))
    if ends:
        window = window[ends[-1].end() :]
    return " ".join(window.split()[-BEFORE_WORDS:])


def _loss_word(before: str, after: str) -> bool | None:
    """True when a loss word governs the figure: it stands just before it, with only linking words, currency and
    scale words between ("net loss was $", "a deficit of EUR", "Operating loss"), or just after it ("$5 million
    loss"), and its clause does not name the other way too ("Net income (loss)"); False when the clause names only
    the other way; None when it holds neither."""
    following = " ".join(re.split(r"[;:.!?,]", after, maxsplit=1)[0].split()[:2])
    words = before.split()
    for i in range(len(words) - 1, -1, -1):
        if _LOSS.search(words[i]):
            between = words[i + 1 :]
            if all(_LINKING.match(w) for w in between):
                return not _GAIN.search(before)
            break
    if _LOSS.search(following) and not _GAIN.search(following):
        return True
    return False if _GAIN.search(before) else None


def _currency_near(text: str, q: Quantity) -> str | None:
    """The currency written next to figure `q` of `text`: a sign or code before it, a code or word after it."""
    before = text[max(0, q.start - 8) : q.start]
    if _SIGN_BEFORE.search(before):
        sign = before.strip(" (")
        return currency_of(sign) or sign
    code = _CODE_BEFORE.search(before)
    if code and reference_kind(text, q) is None:
        return _iso(code.group(1))
    after = text[q.end : q.end + 24]
    code = _CODE_AFTER.match(after)
    if code and code.group(1) in CODES:
        return code.group(1)
    words = _WORDS_AFTER.match(after)
    return currency_of(words.group(1)) if words else None


def _iso(code: str) -> str:
    return code if code in CODES else code.upper()


def _period(text: str, q: Quantity, before: str) -> str | None:
    """The period figure `q` is counted per or over: "per month" or "for the quarter" ("for the three months
    ended") after it, else "monthly" in its clause before it."""
    after = _PERIOD_AFTER.match(text[q.end : q.end + 40])
    if after:
        word = next(g for g in after.groups() if g).casefold().replace(" ", "")
        return _PERIOD_WORDS.get(word) or _PERIOD_WORDS.get(word.replace(".", ""))
    span = _PERIOD_FOR.match(text[q.end : q.end + 60])
    if span:
        named, months = span.group(1), span.group(2)
        return _PERIOD_WORDS[named.casefold().replace("-", " ")] if named else _MONTHS_SPAN[months.casefold()]
    found = _PERIOD_BEFORE.findall(before)
    return _PERIOD_WORDS[found[-1].casefold()] if found else None


def _rounded_to(value: Decimal, quantum: Decimal) -> Decimal:
    if quantum <= 0:
        return value
    return (value / quantum).quantize(Decimal(1), rounding="ROUND_HALF_UP") * quantum


def same_number(claim: Figure, written: Figure) -> bool:
    """Whether the two figures hold the same number to the claim's precision, with the scales that apply to them:
    a scaled claim against the written figure's size ("$1.2 billion" = "1,200 million" = a table's "1,200" in
    millions); a bare claim against a bare written figure as written, or against the written figure's size."""
    if claim.quantity.percent != written.quantity.percent:
        return False
    q = claim.quantity
    if q.scaled:
        return _rounded_to(written.magnitude, q.quantum) == abs(q.value)
    if not written.quantity.scaled and _rounded_to(abs(written.quantity.mantissa), q.quantum) == abs(q.mantissa):
        return True
    return _rounded_to(written.magnitude, q.quantum) == abs(q.value)


def differences(claim: Figure, written: Figure) -> list[str]:
    """What `written` says otherwise than `claim` (empty when it states it): "the number", "the sign", "the
    currency", "the period"."""
    if not same_number(claim, written):
        return ["the number"]
    found = []
    if claim.negative != written.negative:
        found.append("the sign")
    if claim.currency is not None and claim.currency != written.currency:
        found.append("the currency")
    if claim.period is not None and claim.period != written.period:
        found.append("the period")
    return found


def states(claim: Figure, written: Figure) -> bool:
    """Whether `written` states what `claim` says: the same number, sign, currency and period (see the module
    docstring)."""
    return not differences(claim, written)


def unstated(claim: Figure, support: Sequence[Passage]) -> tuple[str, list[int]]:
    """(what no passage of `support` states of `claim` ("" when one states it), the indexes of the passages that
    state it). The reason names what the closest figure says otherwise: "(285,000: the sign)"."""
    stating: list[int] = []
    closest: list[str] | None = None
    for index, source in enumerate(support):
        for written in read_figures(source):
            differ = differences(claim, written)
            if not differ:
                stating.append(index)
                break
            if differ != ["the number"] and (closest is None or len(differ) < len(closest)):
                closest = differ
    if stating:
        return "", stating
    return (f"{claim.text} ({', '.join(closest)} differs)" if closest else claim.text), []
