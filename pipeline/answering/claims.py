"""Yes/no questions without an LM: whether a sentence of the entity's own documents states the event asked
about ("Did Acme announce a share buyback?"), or a table row reports it (pure functions).

A sentence states the event when it holds what the question asks about (nearly all its key terms, in some
form: "repurchase" for "buyback") and says it as a fact: not negated ("did not", "no ... were"), not as a
possibility, a plan or a risk ("may", "could", "intends to", "if"). A row of a table states it when its label
names the event and its figure for the period is not zero; a zero or a dash states that it did not happen.
Nothing stating it: the answer is the question's absent value (False).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from pipeline.answering.figures import metric_terms
from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.terms import held_terms
from pipeline.text import bm25_tokens

# Words of a yes/no question that frame the event without naming it.
_FRAMING = frozenset(
    bm25_tokens("any anything mention mentioned annual report filing company its their there whether during last")
)
_NEGATED = re.compile(
    r"\b(?:did|does|do|has|have|had|was|were|is|are|will|would)\s+not\b|\bn't\b|\bnever\b|\bnone\b|\bneither\b"
    r"|\bno\s+(?:\w+\s+){0,3}(?:was|were|has\s+been|have\s+been|is|are)\b|\bwithout\b",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:may|might|could|would|should|if|unless|whether|intends?\s+to|plans?\s+to|expects?\s+to|anticipates?|"
    r"seeks?\s+to|risks?|possible|potential(?:ly)?|cannot\s+assure|no\s+assurance|subject\s+to)\b",
    re.IGNORECASE,
)
# Where a question's time clause starts.
_WHEN = re.compile(r"\s(?:since|during|after|before|until|as\s+of|over\s+the|throughout|within)\s", re.IGNORECASE)
# Share of the question's key terms a sentence must hold: all of them when it has ALL_TERMS or fewer (the event's
# verb among them: a sentence about the fence that does not say it was replaced does not answer "was it replaced").
MIN_SHARE = 0.75
ALL_TERMS = 4
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
    "since the inspection", "during the year", says when, not what)."""
    event = _WHEN.split(asked, maxsplit=1)[0]
    return tuple(t for t in metric_terms(event, frozenset(generic)) if t not in _FRAMING)


def states(text: str, terms: Sequence[str]) -> float:
    """The share of `terms` that `text` holds, when it says them as a fact (0 when negated or hypothetical)."""
    if not terms or _NEGATED.search(text) or _HYPOTHETICAL.search(text):
        return 0.0
    return len(held_terms(text, frozenset(terms))) / len(terms)


def denies(text: str, terms: Sequence[str]) -> float:
    """The share of `terms` that `text` holds when it says, as a fact, that the event did not happen ("the
    energiser has not been replaced"); 0 otherwise."""
    if not terms or not _NEGATED.search(text) or _HYPOTHETICAL.search(text):
        return 0.0
    return len(held_terms(text, frozenset(terms))) / len(terms)


def stated_claim(sentences: Sequence[OfferedSentence], terms: Sequence[str]) -> Claim | None:
    """The best-ranked sentence that states the event (see the module docstring); else the best that states it
    did not happen (`happened` false); else None."""
    need = 1.0 if len(terms) <= ALL_TERMS else MIN_SHARE
    best: Claim | None = None
    denied: Claim | None = None
    for sentence in sentences[:READ]:
        share = states(sentence.text, terms)
        if share >= need and (best is None or share > best.share):
            best = Claim(sentence, share)
        against = denies(sentence.text, terms)
        if against >= need and (denied is None or against > denied.share):
            denied = Claim(sentence, against, happened=False)
    return best or denied
