"""Defined terms: what a clause defines and the value it gives them (pure functions).

A contract names a value once and then calls it by a term: 'made as of 3 March 2000 (the "Effective Date")',
'solely to evaluate a pilot of a forecasting platform (the "Purpose")', '"Confidential Information" means all
non-public ... information'. A question naming the term ("What is the effective date?") asks for the value, not
for the term's own words: the term is no answer, the value it is defined as is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.text import normalise

_QUOTE_OPEN = "\"“'‘"
_QUOTE_CLOSE = "\"”'’"
# A term defined after its value: '(the "Effective Date")', '("Buyer")', '(hereinafter the "Term")',
# '(each a "Party" and together the "Parties")'.
_AFTER_VALUE = re.compile(
    r"\(\s*(?:(?:the|each|each\s+a|an?|together|collectively|hereinafter|herein|referred\s+to\s+as|called|as)\s+)*"
    rf"[{_QUOTE_OPEN}](?P<term>[A-Z][^{_QUOTE_CLOSE}()]{{0,60}})[{_QUOTE_CLOSE}][^()]{{0,60}}\)"
)
# A term defined before its value: '"Confidential Information" means ...', '"Term" shall mean ...'.
_BEFORE_VALUE = re.compile(
    rf"[{_QUOTE_OPEN}](?P<term>[A-Z][^{_QUOTE_CLOSE}]{{0,60}})[{_QUOTE_CLOSE}]\s+"
    r"(?:shall\s+mean|means|shall\s+have\s+the\s+meaning|has\s+the\s+meaning|refers\s+to|includes)\s+"
)
# Where a value written before its term begins: after a clause's punctuation, an infinitive's verb ("solely to
# evaluate"), or the words that introduce a date or a value ("as of", "dated", "effective", "is", "means").
_VALUE_START = re.compile(
    r"(?:[,;:]\s+(?=[A-Za-z]+\s)(?!\d)|\bto\s+[a-z]+\s+|\b(?:as\s+of|dated|effective(?:\s+as\s+of)?|on|is|are|be|"
    r"shall\s+be|being|means|namely)\s+)",
)
# A value written after its term ends at the first clause that only adds to it.
_VALUE_END = re.compile(r",?\s+(?:including|whether|but\s+excluding|excluding|except|provided\s+that)\b|;|\.\s|\.$")
# A value longer than this is a clause, not a value.
MAX_VALUE_WORDS = 25
# Words a value may start with that belong to the sentence, not to it.
_LEADING = re.compile(r"^(?:and|or|the\s+date\s+of|solely|only)\s+", re.I)


@dataclass(frozen=True)
class Definition:
    """A defined term and the value a clause gives it, as the clause writes them."""

    term: str
    value: str


def definitions(text: str) -> list[Definition]:
    """The terms `text` defines, each with its value: for a term after its value, the words since the value
    began ('made as of 3 March 2000 (the "Effective Date")' -> 3 March 2000); for a term before it, the words
    after "means" up to a clause that only adds to it."""
    out: list[Definition] = []
    boundary = 0
    for match in _AFTER_VALUE.finditer(text):
        before = text[boundary : match.start()].rstrip()
        starts = [m.end() for m in _VALUE_START.finditer(before)]
        value = before[starts[-1] :] if starts else before
        value = _LEADING.sub("", value.strip(" ,;:")).strip(" ,;:")
        if value and len(value.split()) <= MAX_VALUE_WORDS:
            out.append(Definition(match.group("term").strip(), value))
        boundary = match.end()
    for match in _BEFORE_VALUE.finditer(text):
        rest = text[match.end() :]
        end = _VALUE_END.search(rest)
        value = (rest[: end.start()] if end else rest).strip(" ,;:.")
        words = value.split()
        if words:
            cut = " ".join(words[:MAX_VALUE_WORDS]) + (" …" if len(words) > MAX_VALUE_WORDS else "")
            out.append(Definition(match.group("term").strip(), cut))
    return out


def defined_terms(texts: Sequence[str]) -> frozenset[str]:
    """Every term the texts define, normalised ("effective date")."""
    return frozenset(normalise(d.term) for text in texts for d in definitions(text))


def names_term(question: str, term: str) -> bool:
    """Whether `question` names `term` (its words in order, any case, a plural's "s" aside)."""
    words = re.findall(r"[a-z0-9]+", normalise(term))
    if not words:
        return False
    pattern = r"\b" + r"\W+".join(re.escape(w) + r"s?" for w in words) + r"\b"
    return re.search(pattern, normalise(question)) is not None


# Words before a defined term that make a line only the term ("Neither Party", "the Confidential Information").
_DETERMINERS = re.compile(r"^(?:the|a|an|each|either|neither|any|all|such|both|no|this|that|said)\s+", re.I)


def only_term(line: str, terms: frozenset[str]) -> bool:
    """Whether `line` is nothing but a defined term (with a determiner, a plural, punctuation): a fragment that
    names what a clause is about and states nothing."""
    bare = normalise(_DETERMINERS.sub("", line.strip(" .,;:\"“”'‘’")))
    return bool(bare) and (bare in terms or bare.rstrip("s") in terms or f"{bare}s" in terms)
