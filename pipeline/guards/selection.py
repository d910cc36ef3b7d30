"""The chosen answer: the kept chunks split into numbered sentences, and the LM's choice of sentence ids
rendered as bullets that quote those sentences with their own chunk's citation (grounded by
construction; the citation guard still checks every one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.guards.citations import citation_label
from pipeline.guards.sanitise import defuse_field_markers
from pipeline.retrieval.bm25 import BM25Index
from pipeline.text import split_sentences, tokens
from pipeline.types import ChunkHit
from signatures.models import AnswerSection, Bullet, Citation, NumberedSentence

# What a section says when no sentence was chosen (the citation guard reads it as an abstention).
NOTHING_CHOSEN = "The documents shown do not say."
# Sentences offered per section: enough for six kept chunks, bounded so the prompt stays small.
MAX_SENTENCES = 48


@dataclass(frozen=True)
class OfferedSentence:
    """One sentence offered for a section, and the chunk it comes from."""

    sentence_id: int
    text: str
    hit: ChunkHit


def offered_sentences(chunks: Sequence[ChunkHit], max_chars: int, question: str | None = None) -> list[OfferedSentence]:
    """The sentences of each chunk's first `max_chars` characters (a sentence repeated word for word, or
    held inside a longer offered one, is offered once), numbered from 0: in chunk order, or, given the
    section's `question`, best BM25 match to it first (ties keep chunk order). At most MAX_SENTENCES."""
    found: list[tuple[str, ChunkHit]] = []
    seen: set[str] = set()
    for hit in chunks:
        for sentence in split_sentences(hit.chunk.text[:max_chars]):
            if sentence not in seen:
                seen.add(sentence)
                found.append((sentence, hit))
    # A sentence cut by a chunk boundary ("Deposit 2.1 ..." after "2. Deposit 2.1 ...") is offered once,
    # whole: one held inside another offered sentence is left out.
    folded = [f" {' '.join(tokens(text))} " for text, _ in found]
    found = [
        entry
        for i, entry in enumerate(found)
        if not any(i != j and len(other) > len(folded[i]) and folded[i] in other for j, other in enumerate(folded))
    ]
    if question is not None and len(found) > 1:
        scores = BM25Index.build([text for text, _ in found]).scores(question)
        order = sorted(range(len(found)), key=lambda i: -float(scores[i]))
        found = [found[i] for i in order]
    return [OfferedSentence(i, text, hit) for i, (text, hit) in enumerate(found[:MAX_SENTENCES])]


def numbered(sentences: Sequence[OfferedSentence]) -> list[NumberedSentence]:
    """The sentences as the LM is shown them: id, source label, text (field markers defused)."""
    return [
        NumberedSentence(
            sentence_id=s.sentence_id,
            source=citation_label(s.hit.filename, s.hit.chunk.page),
            text=defuse_field_markers(s.text),
        )
        for s in sentences
    ]


@dataclass(frozen=True)
class RenderedChoice:
    """The section built from a choice, and the ids that named no offered sentence (ignored)."""

    section: AnswerSection
    unknown_ids: tuple[int, ...]


def render_choice(
    index: int, chosen: Sequence[int], sentences: Sequence[OfferedSentence], max_bullets: int
) -> RenderedChoice:
    """Section `index` quoting the chosen sentences (first `max_bullets` distinct known ids, in the order
    chosen), each cited with its chunk's page; one abstaining bullet when nothing usable was chosen."""
    by_id = {s.sentence_id: s for s in sentences}
    unknown = tuple(i for i in chosen if i not in by_id)
    picked = [by_id[i] for i in dict.fromkeys(chosen) if i in by_id][:max_bullets]
    bullets = [
        Bullet(text=s.text, citations=[Citation(filename=s.hit.filename, page=s.hit.chunk.page)]) for s in picked
    ]
    if not bullets:
        bullets = [Bullet(text=NOTHING_CHOSEN, citations=[])]
    return RenderedChoice(AnswerSection(sub_question_index=index, bullets=bullets), unknown)
