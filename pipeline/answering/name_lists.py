"""Names and lists of names without an LM ("Which leadership positions changed?", "On which exchanges are its
securities listed?"): the names the best sentences holding what is asked give, each with the sentence it
stands in (pure functions).

A sentence counts when it holds the question's head noun (the thing whose names are asked: "positions",
"exchange", "products") or most of its key terms. Its names are the runs of capitalised words in it that are
not the question's own words; a run holding the head noun ("New York Stock Exchange" for "exchange") is
preferred to the others of its sentence. No sentence of that kind: the question's absent value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.spans import name_runs
from pipeline.answering.terms import coverage, held_terms
from pipeline.text import bm25_tokens, normalise
from pipeline.values.captions import CAPTION
from pipeline.values.name_forms import LEGAL_FORMS
from pipeline.values.typed import MAX_NAMES

# Best-ranked sentences read.
READ = 12
# Share of the key terms a sentence without the head noun must hold.
MIN_SHARE = 0.6
_SPLIT = re.compile(r"\s*\|\s*|;\s*")
# What a question asking for codes names ("trading symbols"), and a code as tables print it.
_CODE_HEADS = frozenset(bm25_tokens("symbol symbols"))
_CODE = re.compile(r"(?<![\w$.-])[A-Z]{1,5}(?:[/.]?\d{1,3}[A-Z]?|\.[A-Z])?(?![\w-])")
_NOT_CODES = frozenset("A I NO YES N/A NA NONE AND OR THE OF LLC INC CORP LLP PLC SEC US USA NYSE NASDAQ ITEM".split())
# What a table says a cell is, in brackets after it ("BA (Trading Symbol)").
_BRACKETED = re.compile(rf"\s{CAPTION}\s*$")
# A sentence that may list codes: it names symbols or the exchanges they trade on.
_CODE_CONTEXT = re.compile(r"\bsymbols?\b|\bexchange\b", re.IGNORECASE)


@dataclass(frozen=True)
class FoundName:
    """A name and the sentence it stands in."""

    name: str
    sentence: OfferedSentence


_HEAD_PHRASES = (
    re.compile(
        r"\bnames?\s+of\s+(?:all\s+|the\s+|any\s+)?((?:[\w-]+\s+){0,3}?[\w-]+?)\s+(?:that|who|which|in|at|of|"
        r"from|on|for)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bwhat\s+(?:are|were|is|was)\s+(?:the\s+|all\s+|its\s+|[\w.&-]+(?:\s[\w.&-]+){0,3}['’]s?\s+)?"
        r"((?:[\w-]+\s+){0,2}?[\w-]+?)(?:\(s\))?\s+"
        r"(?:of|in|on|for|at|that|which|who)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:which|what)\s+((?:[\w-]+\s+){0,3}?[\w-]+?)(?:\(s\))?\s+(?:are|is|were|was|did|does|do|has|have|had|"
        r"changed|took|joined|left|were|will)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"^(?:list|name)\s+(?:every|all|each|the|any)?\s*((?:[\w-]+\s+){0,2}?[\w-]+?)(?:\(s\))?\s+"
        r"(?:on|of|in|at|that|which|who|for|from)\b",
        re.IGNORECASE,
    ),
)


def head_term(question: str, terms: Sequence[str], focus: Sequence[str]) -> str | None:
    """The term naming the thing whose names are asked: the noun a question word or "names of" governs ("On
    which stock exchange(s) ..." -> "exchang"; "names of all new executives who ..." -> "execut"), else the last
    term of the question's focus."""
    phrase = head_phrase(question)
    if phrase:
        return phrase[-1]
    chosen = list(focus) or list(terms)
    return chosen[-1] if chosen else None


def head_terms(question: str, terms: Sequence[str], focus: Sequence[str]) -> list[str]:
    """The terms naming what is asked: the head phrase, else the one head term (see head_term); [] when none."""
    head = head_term(question, terms, focus)
    return head_phrase(question) or ([head] if head else [])


def head_phrase(question: str) -> list[str]:
    """The terms of the phrase a question word or "names of" governs ("In which state or country ..." ->
    ["state", "countri"]); [] when no such phrase is found."""
    for pattern in _HEAD_PHRASES:
        m = pattern.search(question)
        if m is not None:
            stems = bm25_tokens(m.group(1))
            if stems:
                return stems
    return []


def _ends_with(name: str, head: str) -> bool:
    """Whether the last word of a name is the head noun ("New York Stock Exchange" for "exchang")."""
    words = name.split()
    return bool(words) and bool(held_terms(words[-1], {head}))


def listed_names(
    question: str,
    sentences: Sequence[OfferedSentence],
    terms: Sequence[str],
    focus: Sequence[str],
    avoid: AbstractSet[str],
    limit: int = MAX_NAMES,
) -> list[FoundName]:
    """The names the best sentences give (see the module docstring), in sentence order, each once."""
    head = head_term(question, terms, focus)
    fields = field_names(sentences, terms, head_terms(question, terms, focus), limit)
    if fields:
        return fields
    wanted = frozenset(terms)
    read: list[tuple[OfferedSentence, list[str]]] = []
    for sentence in sentences[:READ]:
        has_head = head is not None and bool(held_terms(sentence.text, {head}))
        if not has_head and coverage(sentence.text, wanted) < MIN_SHARE:
            continue
        runs = [
            name
            for piece in _SPLIT.split(sentence.text)
            for run in name_runs(piece, avoid)
            for name in _listed(run.split(" (")[0].strip())
        ]
        read.append((sentence, [r for r in runs if r]))
    if head in _CODE_HEADS:
        # "trading symbols": the codes a table's cells give ("BA", "CL26"), not names of words
        coded = [(s, table_codes(s.text)) for s in sentences[:READ] if _CODE_CONTEXT.search(s.text)]
        return _found([(s, codes) for s, codes in coded if codes], limit)
    # names that hold the head noun ("New York Stock Exchange"), wherever they stand; else the first sentence's
    headed = [(s, [r for r in runs if head is not None and _ends_with(r, head)]) for s, runs in read]
    chosen = [(s, runs) for s, runs in headed if runs] or read[:1]
    return _found(chosen, limit)


# A value a table gives with its caption or column header in brackets after it ("| Delaware (State or other
# jurisdiction of incorporation)", "| KHC (Trading Symbol)"): a cell's whole text after its separator (or at the
# start of a sentence cut inside a table); a caption in prose ("Drains blocked (high priority).") is read as prose.
_CAPTIONED = re.compile(rf"(?:^|(?<=\|\s))([^|()]{{1,80}}?)\s({CAPTION})")
_DEFINED_TERM = re.compile("[\"“”‘’']")
# Words a captioned value may have (a longer run is text the caption does not name).
MAX_VALUE_WORDS = 8
# Question terms a caption must hold when it does not hold the head noun.
MIN_CAPTION_TERMS = 2


def captioned_values(text: str) -> list[tuple[str, str]]:
    """The (value, caption) pairs of a table's text where a cell's value is followed by what it is in brackets
    ("| KHC (Trading Symbol) |")."""
    pairs = []
    for m in _CAPTIONED.finditer(text):
        if m.start(1) == 0 and not text[m.end() :].startswith(" |"):
            continue  # at a sentence's start, only a cell beside another is a table's: prose is read as prose
        value, caption = m.group(1).strip(" ,;:"), m.group(2)[1:-1].strip()
        if _DEFINED_TERM.search(caption):
            continue  # ("the "Tenant"") defines a term for the text; the spans read those
        if value and len(value.split()) <= MAX_VALUE_WORDS and any(c.isalnum() for c in value):
            pairs.append((value, caption))
    return pairs


def field_names(
    sentences: Sequence[OfferedSentence], terms: Sequence[str], heads: Sequence[str], limit: int = MAX_NAMES
) -> list[FoundName]:
    """The values whose caption names what is asked (holds a term of the head phrase, or at least
    MIN_CAPTION_TERMS of the question's terms): "Delaware" for "state of incorporation", the codes under
    "Trading Symbol(s)"; the best caption decides, so values of other fields never mix in. Every offered sentence
    is read: a caption naming what is asked is rare enough to be the answer wherever it stands."""

    # a form's code or a number in the question ("10-K") says which report, not which field
    def wordlike(term: str) -> bool:
        return len(term) > 2 and not any(c.isdigit() for c in term)

    wanted = frozenset(t for t in [*terms, *heads] if wordlike(t))
    head = frozenset(t for t in heads if wordlike(t))
    best: tuple[int, str] | None = None
    found: list[tuple[OfferedSentence, str, str]] = []
    for sentence in sentences:
        for value, caption in captioned_values(sentence.text):
            held = held_terms(caption, wanted)
            named = bool(held_terms(caption, head))
            if not named and (not held or len(held) < min(MIN_CAPTION_TERMS, len(wanted))):
                continue
            found.append((sentence, value, normalise(caption)))
            score = len(held) + (2 if named else 0)
            if best is None or score > best[0]:
                best = (score, normalise(caption))
    if best is None:
        return []
    chosen = [(s, v) for s, v, caption in found if caption == best[1]]
    # a value cut at a sentence's start ("York Stock Exchange") is the end of a whole one found beside it
    whole = [(s, v) for s, v in chosen if not any(o != v and o.endswith(f" {v}") for _, o in chosen)]
    return _found([(s, [v]) for s, v in whole], limit)


def _found(chosen: Sequence[tuple[OfferedSentence, Sequence[str]]], limit: int) -> list[FoundName]:
    """Each name of `chosen` once, with the sentence it was first found in, at most `limit`."""
    found: dict[str, FoundName] = {}
    for sentence, runs in chosen:
        for name in runs:
            key = normalise(name)
            if key not in found and len(found) < limit:
                found[key] = FoundName(name, sentence)
    return list(found.values())


def organisation_name(
    sentences: Sequence[OfferedSentence], terms: Sequence[str], avoid: AbstractSet[str]
) -> FoundName | None:
    """For a question asking which firm or company did something: the first name, in the best sentences that
    hold what is asked, that ends in an organisation's legal form ("Deloitte & Touche LLP", "Acme Ltd")."""
    wanted = frozenset(terms)
    for sentence in sentences[:READ]:
        if wanted and coverage(sentence.text, wanted) < MIN_SHARE:
            continue
        for piece in _SPLIT.split(sentence.text):
            for run in name_runs(piece, avoid):
                words = run.split()
                # the name ends at its legal form ("Ernst & Young LLP", whatever capitalised word follows)
                end = next(
                    (i for i, w in enumerate(words) if i >= 1 and w.casefold().strip(".,;") in LEGAL_FORMS), None
                )
                if end is not None:
                    return FoundName(" ".join(words[: end + 1]).rstrip(",;"), sentence)
    return None


def _listed(run: str) -> list[str]:
    """A run of names a sentence lists with "and" ("Jane Doe and John Roe"), as its names: split where both sides
    are names of two or more words ("Procter and Gamble" stays whole)."""
    parts = [p.strip() for p in re.split(r"\s+and\s+", run)]
    if len(parts) > 1 and all(len(p.split()) >= 2 for p in parts):
        return parts
    return [run]


_ORGANISATION_ASK = re.compile(
    r"\b(?:which|what)\s+(?:\w+\s+){0,2}?(?:firm|company|companies|auditor|bank|lender|organi[sz]ation|entity|"
    r"insurer|law\s+firm|accounting\s+firm)\b|\bwho\s+(?:audited|audits)\b"
    r"|\bname\s+of\s+(?:the\s+|its\s+|their\s+)?(?:[\w'’-]+\s+){0,6}?(?:firm|company|auditor|bank|lender|insurer)\b",
    re.IGNORECASE,
)


def asks_organisation(question: str) -> bool:
    """Whether a question asks which firm, company or organisation ("Which firm audited ...?")."""
    return bool(_ORGANISATION_ASK.search(question))


_COVER = re.compile(r"\bcover(?:\s+page)?\b", re.IGNORECASE)


def asks_cover(question: str) -> bool:
    """Whether a question points at a report's cover ("as listed on the cover of its 10-K"): its first page."""
    return bool(_COVER.search(question))


def table_codes(text: str) -> list[str]:
    """The codes a table's row gives as whole cells ("Common Stock | BA | New York Stock Exchange" -> "BA")."""
    cells = [_BRACKETED.sub("", c).strip(" ()") for c in text.split("|")] if "|" in text else []
    return [c for c in cells if _CODE.fullmatch(c) and c not in _NOT_CODES]
