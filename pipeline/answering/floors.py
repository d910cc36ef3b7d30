"""The answer step without an LM: its floors. Pure functions over a sub-question's ranked sentences.

`sentence_line` takes the best-ranked sentence (cut to MAX_LINE_WORDS); `span_line` takes, from the best-
ranked sentences, the best span of the kind asked for (pipeline.answering.spans), never a heading or a bare
defined term. `support` is the floor of abstention: the best share of the key terms one of the best sentences
holds (with its section's heading), halved when none of them holds a value of the kind asked for; then, per
sentence, `draft_support`: the sentence an answer line rests on must itself hold them (and such a value). Each reads its
sentences under the question's `deadline` (checked per sentence: a floor given a huge table stops at the bound
instead of running on).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from pipeline.answering.asks import AnswerKind
from pipeline.answering.definitions import defined_terms, only_term
from pipeline.answering.headings import is_heading
from pipeline.answering.sentences import OfferedSentence
from pipeline.answering.spans import candidates, scale_note, typed_spans
from pipeline.answering.terms import coverage, held_terms
from pipeline.deadline import Deadline, unbounded
from pipeline.text import normalise

Basis = Literal["extracted", "sentence", "computed", "written"]
# An answer line is at most this many words (a whole clause is no answer).
MAX_LINE_WORDS = 40
# Sentences a floor reads, best-ranked first.
READ_DEPTH = 5
# The tier of a bare small number asked as an amount (pipeline.answering.spans).
BARE_TIER = 3
# Kinds whose answer is a value a sentence holds or lacks.
VALUE_KINDS = frozenset({"amount", "percent", "date", "duration", "count", "name"})


@dataclass(frozen=True)
class Draft:
    """A proposed answer line: its text, the ids of the offered sentences it rests on (most direct first),
    and how it was made."""

    text: str
    evidence: tuple[int, ...]
    basis: Basis


def words(text: str) -> int:
    """Words of `text` as a reader counts them."""
    return len(text.split())


def first_words(text: str, limit: int = MAX_LINE_WORDS) -> str:
    """`text` cut to its first `limit` words (an ellipsis marks the cut)."""
    parts = text.split()
    return text if len(parts) <= limit else " ".join(parts[:limit]) + " …"


def sentence_line(sentences: Sequence[OfferedSentence]) -> Draft | None:
    """The floor "sentence": the best-ranked sentence, cut to MAX_LINE_WORDS."""
    if not sentences:
        return None
    top = sentences[0]
    return Draft(first_words(top.text), (top.sentence_id,), "sentence")


def span_line(
    sentences: Sequence[OfferedSentence],
    kind: AnswerKind,
    terms: Sequence[str],
    question: str,
    focus: Sequence[str] = (),
    deadline: Deadline | None = None,
) -> Draft | None:
    """The floor "span": the first of `span_choices`; no candidate: the best-ranked sentence."""
    chosen = span_choices(sentences, kind, terms, question, focus, deadline, limit=1)
    return chosen[0] if chosen else sentence_line(sentences)


def span_choices(
    sentences: Sequence[OfferedSentence],
    kind: AnswerKind,
    terms: Sequence[str],
    question: str,
    focus: Sequence[str] = (),
    deadline: Deadline | None = None,
    limit: int = 1,
) -> list[Draft]:
    """Up to `limit` answer lines the span floor would give, best first, each from another sentence and with
    another text: each sentence's best candidate span (pipeline.answering.spans) of the READ_DEPTH best-ranked
    sentences, or a field of any offered sentence whose label names what is asked, ordered by tier, then by how
    specific the terms its sentence holds are (a term counts 1 / the number of offered sentences holding it,
    the question's first term twice), then rank. A sentence that holds more of what is asked (`focus`) comes
    before one that holds less, whatever its tier ("the Tenant pays a deposit of EUR 420" before a
    sale's "Deposit (10%) | EUR 8,650" for "How much deposit did the tenant pay?"), except that a bare
    small number never beats a value that says what it is."""
    deadline = deadline or unbounded()
    wanted = frozenset(terms)
    asked = frozenset(focus) or wanted
    counts = dict.fromkeys(wanted, 0)
    for sentence in sentences:
        deadline.check("answering (span floor)")
        for term in held_terms(sentence.with_heading, wanted):
            counts[term] += 1
    rarity = {t: max(1, counts[t]) for t in wanted}
    weight = {t: (2.0 if i == 0 else 1.0) / rarity[t] for i, t in enumerate(terms)}
    # a term the documents define is what a clause is about, never its answer ("Neither Party")
    defined = defined_terms([s.text for s in sentences[:READ_DEPTH]])
    ranked: list[tuple[tuple[float, ...], Draft]] = []
    for rank, sentence in enumerate(sentences):
        deadline.check("answering (span floor)")
        scale = scale_note(sentence.hit.chunk.text)
        found = candidates(sentence.text, kind, terms, question, scale, rarity, focus)
        found = [c for c in found if not is_heading(c.text) and not only_term(c.text, defined)]
        # past the best-ranked sentences only a field its label names the answer to counts
        found = found if rank < READ_DEPTH else [c for c in found if c.tier == 0]
        if not found:
            continue
        top = found[0]
        specificity = sum(weight[t] for t in held_terms(sentence.with_heading, wanted))
        on_focus = len(held_terms(sentence.with_heading, asked))
        key = (float(top.tier >= BARE_TIER), -float(on_focus), float(top.tier), -top.label_score, -specificity, rank)
        ranked.append((key, Draft(top.text, (sentence.sentence_id,), "extracted")))
    chosen: list[Draft] = []
    for _, draft in sorted(ranked, key=lambda r: r[0]):
        if all(normalise(draft.text) != normalise(c.text) for c in chosen):
            chosen.append(draft)
        if len(chosen) >= limit:
            break
    return chosen


# Periods an answer line lists for a question about how a figure moved (each one quoted beneath it).
MAX_LISTED = 3


def trend_line(
    sentences: Sequence[OfferedSentence],
    kind: AnswerKind,
    terms: Sequence[str],
    question: str,
    focus: Sequence[str],
    deadline: Deadline | None = None,
) -> Draft | None:
    """For a question about how a figure moved across periods: the best span of each document (a filing is a
    period), up to MAX_LISTED, as a short list "82,959 million (2022 Q3 ACME.pdf); 117,154 million (...)";
    None when fewer than two documents hold one."""
    by_document: dict[str, list[OfferedSentence]] = {}
    for sentence in sentences:
        by_document.setdefault(sentence.hit.chunk.document_id, []).append(sentence)
    found: list[tuple[str, Draft]] = []
    for group in by_document.values():
        draft = span_line(group, kind, terms, question, focus, deadline)
        if draft is not None and draft.basis == "extracted":
            found.append((group[0].hit.filename, draft))
    if len(found) < 2:
        return None
    listed = sorted(found[:MAX_LISTED], key=lambda f: f[0])
    text = "; ".join(f"{draft.text} ({name})" for name, draft in listed)
    return Draft(text, tuple(i for _, draft in listed for i in draft.evidence), "extracted")


def support(
    sentences: Sequence[OfferedSentence], kind: AnswerKind, terms: AbstractSet[str], deadline: Deadline | None = None
) -> float:
    """How well the best-ranked sentences support an answer: the best share of `terms` (what the question asks
    about) one holds with its section's heading, halved when none of them holds a value of the kind asked for (an
    amount for "how much", a date for "when"). The sentence an answer line is then cited to must itself state it
    (`draft_support`)."""
    read = sentences[:READ_DEPTH]
    if not read:
        return 0.0
    (deadline or unbounded()).check("answering (support floor)")
    best = max(coverage(s.with_heading, terms) for s in read)
    if kind in VALUE_KINDS and not any(typed_spans(s.text, kind, terms, frozenset(), None, 0) for s in read):
        best /= 2
    return best


def sentence_support(sentence: OfferedSentence, kind: AnswerKind, terms: AbstractSet[str]) -> float:
    """How well one sentence states an answer: the share of `terms` (what the question asks about) it holds with
    its section's heading, halved when it holds no value of the kind asked for."""
    held = coverage(sentence.with_heading, terms)
    if kind in VALUE_KINDS and not typed_spans(sentence.text, kind, terms, frozenset(), None, 0):
        held /= 2
    return held


def draft_support(
    draft: Draft, sentences: Sequence[OfferedSentence], kind: AnswerKind, terms: AbstractSet[str]
) -> float | None:
    """How well the sentences an answer line rests on state it: the best `sentence_support` among those it names
    (None when it names none of `sentences`)."""
    by_id = {s.sentence_id: s for s in sentences}
    cited = [by_id[i] for i in draft.evidence if i in by_id]
    if not cited:
        return None
    return max(sentence_support(s, kind, terms) for s in cited)
