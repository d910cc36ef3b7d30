"""Yes/no questions without an LM: whether a sentence of the entity's own documents states the event asked
about ("Did Acme announce a share buyback?"), or a table row reports it (pure functions).

A sentence states the event when it holds what the question asks about (nearly all its key terms, in some
form: "repurchase" for "buyback") and says it as a fact: not negated ("did not", "no ... were"), not as a
possibility, a plan or a risk ("may", "could", "intends to", "if"). A row of a table states it when its label
names the event (its verb, or the event's own noun: "Cash dividends ($1.42 per share)" for "were dividends
declared") and its figure for the period is not zero; a zero or a dash states that it did not happen. A table's
cells that reach the sentences ("| — (Total Number of Shares Purchased)") state nothing: a figure under a column's
caption is the row floor's to read. Nothing stating it: the answer is the question's absent value (False).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pipeline.answering.figures import metric_terms
from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.terms import framing_stems, held_terms
from pipeline.text import bm25_tokens

# Words of a yes/no question that frame the event without naming it.
_FRAMING = frozenset(
    bm25_tokens(
        "any anything mention mentioned annual quarterly report filing company its their there whether during last "
        "cover covers covered"
    )
)
_NEGATED = re.compile(
    r"\b(?:did|does|do|has|have|had|was|were|is|are|will|would)\s+not\b|\bn't\b|\bnever\b|\bnone\b|\bneither\b"
    r"|\bno\s+(?:\w+\s+){0,3}(?:was|were|has\s+been|have\s+been|is|are)\b|\bwithout\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:may|might|could|would|should|if|unless|whether|intends?\s+to|plans?\s+to|expects?\s+to|anticipates?|"
    r"seeks?\s+to|risks?|possible|potential(?:ly)?|cannot\s+assure|no\s+assurance|subject\s+to|once)\b",
    re.IGNORECASE,
)
# Where a question's time clause starts.
_WHEN = re.compile(r"\s(?:since|during|after|before|until|as\s+of|over\s+the|throughout|within)\s", re.IGNORECASE)
# Share of the question's key terms a sentence must hold: all of them when it has ALL_TERMS or fewer; and the
# event's verb always (a sentence about the fence that does not say it was replaced does not answer "was it
# replaced").
MIN_SHARE = 0.75
ALL_TERMS = 2
_BUY_BACK = re.compile(r"\bbuy(?:s|ing)?[\s-]*backs?\b|\bbought\s+back\b", re.IGNORECASE)
# "Were there any share buybacks": what follows names the event.
_THERE = re.compile(r"\b(?:(?:were|was|are|is)\s+there|there\s+(?:were|was|are|is|have\s+been|has\s+been))\b", re.I)
_DID_VERB = re.compile(
    r"\b(?:did|does|do)\s+(?:(?:the|its|their|any)\s+)?(?:company\s+)?([a-z]+(?:\s+or\s+[a-z]+)?)\b", re.IGNORECASE
)
# "not" a few words before a verb's past form: "has historically not declared", "were not paid".
_NOT_BEFORE_VERB = re.compile(r"\b(?:not|never|no)\s+(?:\w+\s+){0,2}?(?:\w+ed|paid|made|sold|bought|held)\b", re.I)
_PARTICIPLE = re.compile(r"\b([a-z]{3,}(?:ed|en)|paid|made|sold|bought|held|taken|given|won|lost)\b", re.IGNORECASE)
# A question's words and the marks between them, in order.
_WORD = re.compile(r"[a-z][a-z'-]*|[^\sa-z]")
# Words that stand before a verb's object without naming it ("pay any share repurchases", "paid a dividend").
_DETERMINERS = frozenset({"any", "a", "an", "the", "its", "their", "some", "all"})
# Auxiliaries a few words before a past participle that make it active ("has the company paid a dividend"), not
# passive ("were dividends declared").
_PERFECT = frozenset({"has", "have", "had"})
# "no" a few words before what the question asks about: "with no repurchases in the first six months".
_NO_BEFORE = re.compile(r"\bno\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.IGNORECASE)
# A table cell as the sentences carry it: a figure or a dash, and the caption of its column in brackets
# ("| — (Total Number of Shares Purchased)", "| (8) (Common Stock Outstanding Shares)").
_CELL = re.compile(r"^\s*(?:[-−–—]+|[$€£]?\s*\(?[-−–]?\s*[$€£]?\d[\d,./]*\)?%?)\s*(?:\([^)]*\)?)?")
# Modals that say something may be done: the answer to a question asking whether it may.
_PERMISSION_MODALS = frozenset({"may", "might", "could"})
# Two words joined by "or": alternatives, either of which names the event.
_OR_PAIR = re.compile(r"\b([a-z][\w-]+)\s+or\s+([a-z][\w-]+)\b", re.IGNORECASE)
# Best-ranked sentences read.
READ = 24


@dataclass(frozen=True)
class Claim:
    """A sentence that states the event asked about (or, `happened` false, states that it did not happen), and
    the share of the question's terms it holds."""

    sentence: OfferedSentence
    share: float
    happened: bool = True


def claim_terms(asked: str, generic: AbstractSet[str] = frozenset()) -> tuple[str, ...]:
    """The stemmed words of a yes/no question that name the event it asks about (a time clause after it,
    "since the inspection", "during the year", says when, not what; "buy back" is what reports call a
    repurchase)."""
    event = _BUY_BACK.sub("repurchase", _WHEN.split(asked, maxsplit=1)[0])
    framing = framing_stems(generic)
    terms = [t for t in metric_terms(event, frozenset(generic)) if t not in _FRAMING and t not in framing]
    # "mergers or acquisitions": either one states it, so the two are one term ("merger|acquisit")
    for first, second in _OR_PAIR.findall(event):
        a, b = next(iter(bm25_tokens(first)), ""), next(iter(bm25_tokens(second)), "")
        if a in terms and b in terms and a != b:
            terms[terms.index(a)] = f"{a}|{b}"
            terms.remove(b)
    return tuple(terms)


def event_verbs(asked: str) -> frozenset[str]:
    """The stems of the verbs that name the event ("Did the company announce ..." -> "announc"; "declare or pay"
    -> "declar", "pay"; "were dividends declared" -> "declar"): the words after "did/does/do" (joined by "or"),
    else the first past participle; empty when neither."""
    event = _BUY_BACK.sub("repurchase", _WHEN.split(asked, maxsplit=1)[0])
    m = _DID_VERB.search(event)
    words = [w for w in re.split(r"\s+or\s+", m.group(1)) if w] if m else []
    if not words and (p := _PARTICIPLE.search(event)):
        words = [p.group(1)]
    stems = {t for w in words for t in bm25_tokens(w)[:1]}
    return frozenset(t for t in stems if t not in _FRAMING)


def event_nouns(asked: str) -> frozenset[str]:
    """The stem of the noun the question's verb acts on, the event's own name ("were common stock dividends
    declared", "declare or pay any dividends to ...", "has ... paid a dividend" -> "dividend"; "pay any share
    repurchases", "were there any share buybacks" -> "repurchas"): the last key term of the run right after the
    verb or "there were", or just before a passive participle. Empty when the verb names the event itself
    ("repurchase any of its common stock", "pay to acquire") or no verb is found."""
    event = _BUY_BACK.sub("repurchase", _WHEN.split(asked, maxsplit=1)[0])
    terms = set(claim_terms(event))
    words = _WORD.findall(event.casefold())
    stems = [next(iter(bm25_tokens(w)), "") for w in words]
    head = None
    if verb := _THERE.search(event) or _DID_VERB.search(event):
        head = _object_head(words, stems, len(_WORD.findall(event[: verb.end()].casefold())), terms)
    elif participle := _PARTICIPLE.search(event):
        at = len(_WORD.findall(event[: participle.start()].casefold()))
        if _PERFECT & set(words[max(0, at - 4) : at]):
            head = _object_head(words, stems, at + 1, terms)
        elif at and stems[at - 1] in terms:
            head = stems[at - 1]
    return frozenset({head} - _FRAMING) if head else frozenset()


def _object_head(words: Sequence[str], stems: Sequence[str], start: int, terms: AbstractSet[str]) -> str | None:
    """The last stem of the run of key terms from `start`, past its determiners (a verb's object); None when
    "to" or "of" comes first (an infinitive or a partitive: the verb itself names the event)."""
    i = start
    while i < len(words) and words[i] in _DETERMINERS:
        i += 1
    if i < len(words) and words[i] in ("to", "of"):
        return None
    head = None
    while i < len(stems) and stems[i] in terms:
        head = stems[i]
        i += 1
    return head


def stated_text(text: str) -> str:
    """What a sentence says in words, without the table cells it carries: a cell (a figure or a dash with its
    column's caption) after a "|" reports a figure, which only its row, read as a row, can say happened."""
    parts = text.split("|")
    return " ".join([parts[0], *(_CELL.sub(" ", p, count=1) for p in parts[1:])]).strip()


def negated(text: str, terms: Sequence[str] = ()) -> bool:
    """Whether `text` says something did not happen ("did not repurchase", "has historically not declared",
    "no shares were repurchased", or "no" just before one of `terms`: "with no repurchases in 2023")."""
    if _NEGATED.search(text) or _NOT_BEFORE_VERB.search(text):
        return True
    return any(held_terms(m.group(1), frozenset(terms)) for m in _NO_BEFORE.finditer(text))


def held_share(text: str, terms: Sequence[str]) -> float:
    """The share of `terms` that `text` holds; a term of alternatives ("merger|acquisit") is held when one is."""
    if not terms:
        return 0.0
    words = frozenset(w for t in terms for w in t.split("|"))
    held = held_terms(text, words)
    return sum(1 for t in terms if any(w in held for w in t.split("|"))) / len(terms)


def plain_terms(terms: Sequence[str]) -> list[str]:
    """`terms` with each term of alternatives ("merger|acquisit") as its words."""
    return [w for t in terms for w in t.split("|")]


def hypothetical(text: str, permission: bool = False) -> bool:
    """Whether `text` says something only as a possibility, a plan, a risk or a condition; for a question asking
    whether something may be done (`permission`), "may" and "could" state that it may."""
    found = _HYPOTHETICAL.findall(text)
    if permission:
        found = [w for w in found if w.casefold() not in _PERMISSION_MODALS]
    return bool(found)


def states(text: str, terms: Sequence[str], permission: bool = False) -> float:
    """The share of `terms` that `text` holds, when it says them as a fact (0 when negated or hypothetical)."""
    if not terms or negated(text, plain_terms(terms)) or hypothetical(text, permission):
        return 0.0
    return held_share(text, terms)


def denies(text: str, terms: Sequence[str], permission: bool = False) -> float:
    """The share of `terms` that `text` holds when it says, as a fact, that the event did not happen ("the
    energiser has not been replaced"); 0 otherwise."""
    if not terms or not negated(text, plain_terms(terms)) or hypothetical(text, permission):
        return 0.0
    return held_share(text, terms)


def stated_claim(
    sentences: Sequence[OfferedSentence],
    terms: Sequence[str],
    verbs: AbstractSet[str] = frozenset(),
    permission: bool = False,
) -> Claim | None:
    """The best-ranked sentence that states the event (see the module docstring); else the best that states it
    did not happen (`happened` false); else None. A sentence must hold one of the event's `verbs` when given;
    `permission`: the question asks whether something may be done ("Can either party terminate ...?")."""
    need = 1.0 if len(terms) <= ALL_TERMS else MIN_SHARE
    best: Claim | None = None
    denied: Claim | None = None
    for sentence in sentences[:READ]:
        text = stated_text(sentence.text)
        if verbs and not held_terms(text, verbs):
            continue
        share = states(text, terms, permission)
        if share >= need and (best is None or share > best.share):
            best = Claim(sentence, share)
        against = denies(text, terms, permission)
        if against >= need and (denied is None or against > denied.share):
            denied = Claim(sentence, against, happened=False)
    return best or denied
