"""Currencies and the scale a table states for its figures, as reports write them (pure functions).

"(In millions, except per share amounts)", "($ in thousands)", "€m", "£'000", "US$ million", "RMB'000",
"in thousands of euros", "EUR k", "TEUR": a table's note says in which currency and scale its bare figures
are; a figure's own sign ("$81,797", "€ 1.2bn") says its currency.
"""

from __future__ import annotations

import re
from typing import Literal

Scale = Literal["thousand", "million", "billion"]

# Currency signs and codes as reports write them, longest first where one is inside another ("HK$" before
# "$"). A bare "$" is the US dollar: a report in another dollar names it (A$, C$, HK$, S$, NZ$).
_SIGNS: tuple[tuple[str, str], ...] = (
    ("US$", "USD"),
    ("U.S.$", "USD"),
    ("A$", "AUD"),
    ("AU$", "AUD"),
    ("C$", "CAD"),
    ("CA$", "CAD"),
    ("HK$", "HKD"),
    ("NZ$", "NZD"),
    ("S$", "SGD"),
    ("NT$", "TWD"),
    ("R$", "BRL"),
    ("MX$", "MXN"),
    ("$", "USD"),
    ("€", "EUR"),
    ("£", "GBP"),
    ("¥", "JPY"),
    ("₹", "INR"),
    ("₩", "KRW"),
    ("₽", "RUB"),
    ("₺", "TRY"),
    ("₪", "ILS"),
    ("₱", "PHP"),
    ("₦", "NGN"),
    ("zł", "PLN"),
)
# ISO codes a report writes as words, and the words for them.
CODES = frozenset(
    "USD EUR GBP JPY CNY HKD CHF CAD AUD NZD SEK NOK DKK ISK PLN CZK HUF RON BGN RUB TRY INR IDR MYR SGD THB"
    " PHP VND KRW TWD BRL MXN ARS CLP COP PEN ZAR NGN EGP KES ILS AED SAR QAR KWD".split()
)
_WORDS: dict[str, str] = {
    "dollar": "USD",
    "dollars": "USD",
    "us dollars": "USD",
    "u.s. dollars": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "pound": "GBP",
    "pounds": "GBP",
    "pounds sterling": "GBP",
    "sterling": "GBP",
    "yen": "JPY",
    "renminbi": "CNY",
    "rmb": "CNY",
    "yuan": "CNY",
    "swiss francs": "CHF",
    "swiss franc": "CHF",
    "francs": "CHF",
    "us dollar": "USD",
    "u.s. dollar": "USD",
    "united states dollars": "USD",
    "japanese yen": "JPY",
    "british pounds": "GBP",
    "chinese yuan": "CNY",
    "canadian dollars": "CAD",
    "australian dollars": "AUD",
    "hong kong dollars": "HKD",
    "singapore dollars": "SGD",
    "new zealand dollars": "NZD",
    "indian rupees": "INR",
    "swedish kronor": "SEK",
    "norwegian kroner": "NOK",
    "danish kroner": "DKK",
    "brazilian reais": "BRL",
    "mexican pesos": "MXN",
    "south african rand": "ZAR",
    "korean won": "KRW",
    "rupees": "INR",
    "won": "KRW",
    "kronor": "SEK",
    "kroner": "NOK",
    "rand": "ZAR",
    "reais": "BRL",
}
_SCALE_WORDS: dict[str, Scale] = {
    "thousand": "thousand",
    "thousands": "thousand",
    "'000": "thousand",
    "’000": "thousand",
    "000s": "thousand",
    "000": "thousand",
    "k": "thousand",
    "million": "million",
    "millions": "million",
    "mn": "million",
    "mio": "million",
    "mln": "million",
    "m": "million",
    "billion": "billion",
    "billions": "billion",
    "bn": "billion",
    "b": "billion",
}
_SIGN_PATTERN = "|".join(re.escape(sign) for sign, _ in _SIGNS)
_CODE_PATTERN = "|".join(sorted(CODES))
_WORD_PATTERN = "|".join(sorted((re.escape(w) for w in _WORDS), key=len, reverse=True))
_MONEY = rf"(?:{_SIGN_PATTERN}|\b(?:{_CODE_PATTERN})\b|\b(?:{_WORD_PATTERN})\b|\brmb\b)"
# "in millions", "(in thousands of euros)", "($ in millions)", "amounts in EUR million", "in € millions"
_IN_SCALE = re.compile(
    rf"\bin\s+(?:(?P<pre>{_MONEY})\s*)?(?P<scale>thousands?|millions?|billions?)\b"
    rf"(?:\s+of\s+(?P<post>{_MONEY}))?",
    re.IGNORECASE,
)
# "(Millions, except per share data)", "(Dollars in millions)", "(millions of euros)": a bracket that opens on
# the scale.
_BRACKET_SCALE = re.compile(
    rf"\(\s*(?:(?P<pre>{_MONEY})\s+)?(?P<scale>thousands|millions|billions)\b(?:\s+of\s+(?P<post>{_MONEY}))?",
    re.IGNORECASE,
)
# "€m", "£'000", "$000s", "US$ million", "EUR k", "RMB'000", "USD thousand", "EUR mn", "€ in millions", and a
# code written together with its scale: "EURm", "USDm", "SEKbn"
_GLUED = re.compile(
    rf"(?P<money>{_MONEY}|\b(?:{_CODE_PATTERN})(?=[mk]\b|bn\b|mn\b))\s?(?:in\s+)?(?P<scale>'000|’000|000s|000|thousands?|millions?|billions?|mn|mio|mln|bn|k|m|b)"
    rf"(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# "TEUR", "kEUR", "MEUR", "Mio. €", "Mio. EUR", "Tsd. EUR"
_PREFIXED = re.compile(
    rf"\b(?P<scale>T|k|M|Mio\.?|Tsd\.?|Mrd\.?)\s?(?P<money>(?:{_CODE_PATTERN})\b|€)",
)
_PREFIX_SCALES: dict[str, Scale] = {"t": "thousand", "k": "thousand", "tsd": "thousand", "m": "million"}
_PREFIX_SCALES.update({"mio": "million", "mrd": "billion"})


def currency_sign(code: str | None) -> str:
    """The sign reports write for a currency ("€" for EUR), "" when it has none of its own."""
    return next((sign for sign, c in _SIGNS if c == code and len(sign) == 1), "")


def money_spans(text: str) -> list[tuple[int, int, str | None]]:
    """(start, end, ISO code) of every currency `text` names by sign, code or word."""
    return [(m.start(), m.end(), _code(m.group(0))) for m in re.finditer(_MONEY, text, re.IGNORECASE)]


def currency_of(text: str) -> str | None:
    """The ISO code of the first currency `text` names by sign ("€", "US$"), code ("EUR") or word
    ("euros"); None when it names none."""
    match = re.search(_MONEY, text, re.IGNORECASE)
    return _code(match.group(0)) if match else None


def _code(money: str) -> str | None:
    folded = money.strip()
    for sign, code in _SIGNS:
        if folded == sign:
            return code
    upper = folded.upper()
    if upper in CODES:
        return upper
    if upper == "RMB":
        return "CNY"
    return _WORDS.get(" ".join(folded.casefold().split()))


def table_units(text: str) -> tuple[Scale | None, str | None]:
    """(scale, currency) a table's note or header states for its bare figures: "(In millions, except per
    share amounts)" -> ("million", None); "(in thousands of euros)" -> ("thousand", "EUR"); "€m" ->
    ("million", "EUR"); "$'000" -> ("thousand", "USD"). The first statement found wins."""
    found: list[tuple[int, Scale, str | None]] = []
    for m in _IN_SCALE.finditer(text):
        money = m.group("pre") or m.group("post")
        found.append((m.start(), _SCALE_WORDS[m.group("scale").casefold()], _code(money) if money else None))
    for m in _BRACKET_SCALE.finditer(text):
        money = m.group("pre") or m.group("post")
        found.append((m.start(), _SCALE_WORDS[m.group("scale").casefold()], _code(money) if money else None))
    for m in _GLUED.finditer(text):
        scale_word = m.group("scale").casefold()
        if scale_word in ("m", "b", "k", "000") and not _glued_ok(text, m):
            continue
        found.append((m.start(), _SCALE_WORDS[scale_word], _code(m.group("money"))))
    for m in _PREFIXED.finditer(text):
        key = m.group("scale").casefold().rstrip(".")
        found.append((m.start(), _PREFIX_SCALES[key], _code(m.group("money"))))
    if not found:
        return None, currency_of(text) if _names_currency_only(text) else None
    found.sort(key=lambda f: f[0])
    scale = found[0][1]
    currency = next((c for _, _, c in found if c), None)
    return scale, currency


def _glued_ok(text: str, match: re.Match[str]) -> bool:
    """A one-letter or bare "000" scale glued to a currency ("€m", "$000") counts only as a column heading
    or note would write it: not followed by a figure ("$m 12" yes; "$1m" is a figure, not a heading)."""
    after = text[match.end() : match.end() + 3]
    return not re.match(r"\s?\d", after) or match.group("scale") == "000"


def _names_currency_only(text: str) -> bool:
    """Whether `text` is a short note that names a currency and nothing else of substance ("(USD)",
    "Amounts in EUR")."""
    return len(text) <= 60 and bool(re.search(r"\bamounts?\s+in\b|^\(?\s*[A-Z]{3}\s*\)?$", text.strip(), re.I))
