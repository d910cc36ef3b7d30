"""The abbreviations financial statements' readers write for line items the statements print in full ("R&D" is
"Research and development", "SG&A" "Selling, general and administrative"), written out so that a question's
words meet a row's label; and the line items whose names hold "and", kept whole when a question lists several
("research and development and selling, general and administrative expenses" is two items, not four). Names of
the standard statement lines, not of any one company's. Pure functions."""

from __future__ import annotations

import re

_ABBREVIATIONS = {
    "r&d": "research and development",
    "sg&a": "selling, general and administrative",
    "g&a": "general and administrative",
    "s&m": "sales and marketing",
    "d&a": "depreciation and amortization",
    "pp&e": "property, plant and equipment",
    "capex": "capital expenditures",
    "opex": "operating expenses",
    # a reader's words for the statement's "Total operating expenses"
    "operational spending": "operating expenses",
    "operational expenses": "operating expenses",
    "operational expenditures": "operating expenses",
    "operating expenditures": "operating expenses",
    "operating spending": "operating expenses",
}
_ABBREVIATED = re.compile(
    r"(?<![\w&])("
    + "|".join(re.escape(a).replace(r"\ ", r"\s+") for a in sorted(_ABBREVIATIONS, key=len, reverse=True))
    + r")(?![\w&])",
    re.IGNORECASE,
)
# Statement lines whose names join words with "and" (longest first, so "selling, general and administrative"
# wins over "general and administrative").
COMPOUND_ITEMS = (
    "marketing, general and administrative",
    "selling, general and administrative",
    "sales, general and administrative",
    "property, plant and equipment",
    "research and development",
    "general and administrative",
    "sales and marketing",
    "selling and marketing",
    "depreciation and amortization",
    "cash and cash equivalents",
    "property and equipment",
    "interest and other",
    "service and other",
    "accounts payable and accrued liabilities",
    "products and services",
)
_JOINER = "\x00"
_COMPOUND = re.compile(
    "|".join(
        re.escape(c).replace(",\\ ", r",?\s+").replace(r"\ and\ ", r",?\s+and\s+").replace(r"\ ", r"\s+")
        for c in sorted(COMPOUND_ITEMS, key=len, reverse=True)
    ),
    re.IGNORECASE,
)
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", re.IGNORECASE)
# What a list of line items may end in that belongs to every item ("... and general and administrative expenses").
_SHARED_TAIL = re.compile(r"\s+(?:expenses?|costs?|spending|together|combined|in\s+total)$", re.IGNORECASE)


def expand_abbreviations(text: str) -> str:
    """`text` with each line item's abbreviation written out ("Intel's R&D spending" -> "Intel's research and
    development spending")."""
    return _ABBREVIATED.sub(lambda m: _ABBREVIATIONS[" ".join(m.group(1).casefold().split())], text)


def line_items(phrase: str) -> list[str]:
    """The line items a phrase lists, split at its commas and "and"s but never inside a statement line's own name,
    the words they all share at the end left off ("research and development, sales and marketing, and general
    and administrative expenses" -> the three names)."""
    text = phrase.strip(" ,")
    while (shared := _SHARED_TAIL.search(text)) is not None:
        text = text[: shared.start()]
    protected = _COMPOUND.sub(lambda m: _protect(m.group(0)), text)
    items = [_unprotect(p) for p in _LIST_SEPARATOR.split(protected)]
    return [item for item in items if item]


def _protect(name: str) -> str:
    """A line item's name with its own commas and "and"s hidden from the list's separators."""
    return re.sub(r",?\s+and\s+", f" {_JOINER} ", " ".join(name.split())).replace(",", _JOINER * 2)


def _unprotect(item: str) -> str:
    return item.replace(_JOINER * 2, ",").replace(f" {_JOINER} ", " and ").strip()
