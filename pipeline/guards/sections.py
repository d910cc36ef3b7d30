"""One answer section as the guards let it through: its answer line, the evidence sentences quoted beneath it,
the pages they cite, and every intervention. Each quote must come from a page shown for this section and
inside scope (pipeline.guards.citations); the line must be grounded in the quotes that remain
(pipeline.guards.grounding), else it is replaced by the best quote; text is sanitised and capped."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

from pipeline.answering.compute import Computation
from pipeline.answering.floors import MAX_LINE_WORDS, Basis, Draft, first_words, words
from pipeline.answering.sentences import OfferedSentence
from pipeline.guards.citations import CitedSource, RemovedCitation, check_source, shown_sources
from pipeline.guards.grounding import ground_line
from pipeline.guards.sanitise import sanitise, strip_inline_citations
from pipeline.types import ChunkHit
from pipeline.values.figures import Passage, passage
from pipeline.values.quantities import missing_values

# What a section says when the documents in scope do not answer its sub-question.
NOT_FOUND = "The documents in scope do not state this."
MISSING_SECTION = "Unable to answer this sub-question."
MAX_LINE_CHARS = 400
MAX_QUOTE_CHARS = 600
SectionStatus = Literal["answered", "not_found", "error"]


@dataclass(frozen=True)
class Quote:
    """An evidence sentence as shown (sanitised, capped) and the page it is quoted from."""

    text: str
    source: CitedSource


@dataclass(frozen=True)
class GuardedSection:
    """What one section may show, and what the guards did to the answer step's proposal."""

    status: SectionStatus
    line: str = ""
    line_sources: tuple[CitedSource, ...] = ()
    quotes: tuple[Quote, ...] = ()
    basis: Basis | None = None
    formula: str | None = None
    reason: str | None = None
    removed: tuple[RemovedCitation, ...] = ()
    interventions: tuple[tuple[str, str], ...] = ()

    @property
    def sources(self) -> tuple[CitedSource, ...]:
        """Every page the section cites: the line's, then the quotes', without repeats."""
        seen: dict[tuple[str, int], CitedSource] = {}
        for source in (*self.line_sources, *(q.source for q in self.quotes)):
            seen.setdefault((source.document_id, source.page), source)
        return tuple(seen.values())


def not_found(reason: str) -> GuardedSection:
    """A section saying the documents in scope do not state the answer, and why (for the trace)."""
    return GuardedSection("not_found", NOT_FOUND, reason=reason)


def _source(sentence: OfferedSentence) -> CitedSource:
    hit = sentence.hit
    return CitedSource(hit.chunk.document_id, hit.filename, hit.chunk.page)


def guard_section(
    index: int,
    draft: Draft | None,
    evidence: Sequence[OfferedSentence],
    chunks: Sequence[ChunkHit],
    allowed: Collection[str] | None,
    computation: Computation | None = None,
    generic: AbstractSet[str] = frozenset(),
    question: str | None = None,
) -> GuardedSection:
    """Section `index` from the answer step's `draft` (or `computation`) and its `evidence`, as the guards let
    it through: quotes only from pages shown for this section and inside `allowed`; a line grounded in the
    quotes kept (a computed line: every operand quoted), at most MAX_LINE_WORDS words, else the first quote
    stands as the line; no quote left: not found."""
    if draft is None and computation is None:
        return not_found("the answer step found no answer")
    shown = shown_sources(chunks)
    interventions: list[tuple[str, str]] = []
    removed: list[RemovedCitation] = []
    quotes: list[Quote] = []
    passages: list[Passage] = []  # each quote with what its chunk says of its bare figures (a table's note)
    for sentence in evidence:
        verdict = check_source(index, _source(sentence), shown, allowed)
        if isinstance(verdict, RemovedCitation):
            removed.append(verdict)
            continue
        clean = sanitise(sentence.text, MAX_QUOTE_CHARS)
        interventions.extend(("render", item) for item in clean.removed)
        same = any(q.text == clean.text and q.source.document_id == verdict.document_id for q in quotes)
        if clean.text and not same:
            quotes.append(Quote(clean.text, verdict))
            passages.append(passage(clean.text, sentence.hit.chunk.text))
    if not quotes:
        return GuardedSection(
            "not_found",
            NOT_FOUND,
            reason="no evidence sentence survived the citation check",
            removed=tuple(removed),
            interventions=tuple(interventions),
        )
    if computation is not None:
        return _computed(computation, quotes, removed, interventions)
    if draft is None:  # unreachable: checked above; kept for the type checker
        return not_found("the answer step found no answer")
    clean = sanitise(strip_inline_citations(draft.text), MAX_LINE_CHARS)
    interventions.extend(("render", item) for item in clean.removed)
    if clean.cut_from is not None:
        interventions.append(("cap", f"answer line of {clean.cut_from} characters cut to {MAX_LINE_CHARS}"))
    line, basis = clean.text, draft.basis
    if words(line) > MAX_LINE_WORDS:
        interventions.append(("cap", f"answer line of {words(line)} words cut to {MAX_LINE_WORDS}"))
        line = first_words(line)
    grounding = ground_line(line, passages, generic, question)
    if not grounding.grounded:
        interventions.append(("grounding", f"answer line replaced by its first quote: {grounding.reason}"))
        line, basis = first_words(quotes[0].text), "sentence"
    stating = tuple(
        q.source for q, p in zip(quotes, passages, strict=True) if not missing_values(line, q.text) and _holds(line, p)
    )
    return GuardedSection(
        "answered",
        line,
        stating[:1] or (quotes[0].source,),
        tuple(quotes),
        basis,
        reason=None,
        removed=tuple(removed),
        interventions=tuple(interventions),
    )


def _holds(line: str, quoted: Passage) -> bool:
    """Whether the quote holds the line (values compared as values; words as a grounding check would)."""
    return ground_line(line, [quoted]).grounded


def _computed(
    computation: Computation,
    quotes: list[Quote],
    removed: list[RemovedCitation],
    interventions: list[tuple[str, str]],
) -> GuardedSection:
    """A computed line: grounded when every operand is quoted on a page kept among the quotes."""
    kept = {(q.source.document_id, q.source.page) for q in quotes}
    missing = [
        o.name
        for o in computation.operands
        if (o.sentence.hit.chunk.document_id, o.sentence.hit.chunk.page) not in kept
    ]
    if missing:
        reason = f"operands {', '.join(missing)} were not quoted from a page shown in scope"
        return GuardedSection(
            "not_found",
            NOT_FOUND,
            reason=reason,
            removed=tuple(removed),
            interventions=(*interventions, ("grounding", reason)),
        )
    sources = tuple(dict.fromkeys(_source(o.sentence) for o in computation.operands))
    return GuardedSection(
        "answered",
        computation.line,
        sources,
        tuple(quotes),
        "computed",
        formula=computation.formula,
        removed=tuple(removed),
        interventions=tuple(interventions),
    )
