"""A question's key terms, and whether a text holds them (pure functions).

Key terms are the stemmed words of a question that say what it is about: no stopword, no question word
("what", "how", "much"), no generic word of the corpus. A text holds a term in some form: the same stem, or
one stem a prefix of the other of at least four letters ("rent" of "rent" and "rental" of "rentals"),
or a written abbreviation of it ("no." for "number").
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from pipeline.text import STOPWORDS, bm25_tokens, tokens

# Words of a question that say what kind of answer it wants, not what it is about.
QUESTION_WORDS = frozenset(
    """what which who whom whose when where why how much many long often is are was were does do did has have
    had can could will would must may might should shall give list name tell state describe according any
    there per""".split()
)
# Stems a document writes for a question's word: abbreviations ("REG. NO: 1160/88" for a registration
# number) and the few plain-English words that name the same figure or act ("sales" and "revenue").
_ABBREVIATIONS: dict[str, frozenset[str]] = {
    "number": frozenset({"no", "nr", "num"}),
    "percent": frozenset({"pct"}),
    "amount": frozenset({"amt"}),
    "sale": frozenset({"revenu"}),
    "revenu": frozenset({"sale"}),
    "profit": frozenset({"incom", "earn"}),
    "incom": frozenset({"profit", "earn"}),
    "earn": frozenset({"incom", "profit"}),
    "cost": frozenset({"expens"}),
    "expens": frozenset({"cost"}),
    "buy": frozenset({"purchas"}),
    "purchas": frozenset({"buy"}),
    "repurchas": frozenset({"buyback"}),
    "buyback": frozenset({"repurchas"}),
}


def ordered_terms(question: str, generic: AbstractSet[str] = frozenset()) -> list[str]:
    """Stemmed key terms of `question`, in question order (references such as "2327/30" kept whole)."""
    kept = [
        w
        for w in tokens(question, "/.-")
        if len(w) > 1 and w not in STOPWORDS and w not in QUESTION_WORDS and w not in generic
    ]
    return list(dict.fromkeys(t for w in kept for t in bm25_tokens(w)))


# Where the thing asked about ends and what identifies it begins: "the land area | of plot 1159/215".
_COMPLEMENT = re.compile(r"\s(?:of|for|in|on|under|at|from|to|with|between|about|during|within|as)\s", re.I)
_WH_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|where|how)\b", re.I)


def focus_terms(question: str, generic: AbstractSet[str] = frozenset()) -> list[str]:
    """The key terms of what `question` asks about: from its question word to its first complement ("What is
    the land area of plot 1159/215?" -> land, area; "Under the contract, what interest is charged on ..." ->
    interest, charged); all its key terms when that part has none."""
    wh = _WH_WORD.search(question)
    head = _COMPLEMENT.split(question[wh.start() if wh else 0 :], maxsplit=1)[0]
    return ordered_terms(head, generic) or ordered_terms(question, generic)


def key_terms(question: str, generic: AbstractSet[str] = frozenset()) -> frozenset[str]:
    """The key terms of `question` (ordered_terms) as a set."""
    return frozenset(ordered_terms(question, generic))


def related(term: str, token: str) -> bool:
    """Whether two stems are one word's forms (see the module docstring)."""
    if term == token or token in _ABBREVIATIONS.get(term, ()):
        return True
    short, long = sorted((term, token), key=len)
    return len(short) >= 4 and long.startswith(short)


def held_terms(text: str, terms: AbstractSet[str]) -> set[str]:
    """The `terms` that `text` holds in some form."""
    found = set(bm25_tokens(text))
    return {t for t in terms if t in found or any(related(t, w) for w in found)}


def coverage(text: str, terms: AbstractSet[str]) -> float:
    """Share of `terms` that `text` holds in some form (1.0 when there are none)."""
    if not terms:
        return 1.0
    return len(held_terms(text, terms)) / len(terms)
