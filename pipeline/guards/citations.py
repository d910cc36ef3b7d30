"""Citations and grounding: a citation must name a chunk shown for its own section, inside scope, and a
bullet must be supported by the pages it cites; `build_section` applies both to one answer section."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import Literal

from pipeline.guards.sanitise import MAX_BULLET_TEXT_CHARS, markdown_literal, sanitise, strip_inline_citations
from pipeline.text import content_words, normalise
from pipeline.types import ChunkHit
from pipeline.vocabulary import Vocabulary
from signatures.models import AnswerSection

CitationReason = Literal["not_shown_for_section", "out_of_scope"]


@dataclass(frozen=True)
class CitedSource:
    """A page that a section may cite: document, filename and page."""

    document_id: str
    filename: str
    page: int


@dataclass(frozen=True)
class RemovedCitation:
    """A citation the check took out, with the section it was in and why."""

    section: int
    filename: str
    page: int
    reason: CitationReason


def shown_sources(chunks: Sequence[ChunkHit]) -> list[CitedSource]:
    """Distinct (document, page) pairs of the chunks shown to a section, in first-seen order."""
    seen: dict[tuple[str, int], CitedSource] = {}
    for hit in chunks:
        key = (hit.chunk.document_id, hit.chunk.page)
        seen.setdefault(key, CitedSource(hit.chunk.document_id, hit.filename, hit.chunk.page))
    return list(seen.values())


def check_citation(
    section: int, filename: str, page: int, shown: Sequence[CitedSource], allowed: Collection[str] | None
) -> CitedSource | RemovedCitation:
    """The matching shown source, or the reason the citation must go.

    `allowed` is the scope's document ids (None: every catalogued document). Matching is by
    exact filename and page among the chunks shown for this very section.
    """
    match = next((s for s in shown if s.filename == filename and s.page == page), None)
    if match is None:
        return RemovedCitation(section, filename, page, "not_shown_for_section")
    if allowed is not None and match.document_id not in allowed:
        return RemovedCitation(section, filename, page, "out_of_scope")
    return match


def citation_label(filename: str, page: int) -> str:
    """The inline form of a citation: [filename, page N], the file name escaped as Markdown text (a name is
    data: `rent](https:x).md` must not make a link)."""
    return f"[{markdown_literal(filename)}, page {page}]"


# ---- is a bullet supported by what it cites? ------------------------------------------------

_ABSTAIN = re.compile(r"\b(?:not (?:stated|say|mention|given|found|available|specified)|no (?:information|mention))\b")
# Share of a bullet's content words that must appear in the pages it cites.
MIN_GROUNDED_SHARE = 0.6


def restates_question(text: str, question: str, generic: AbstractSet[str] = frozenset()) -> bool:
    """True when a bullet says nothing beyond the words of the question it answers (`generic`
    words, which name a kind of thing, say nothing)."""
    words = content_words(text, generic)
    return not words or words <= content_words(question, generic)


def is_abstention(text: str) -> bool:
    """True for a bullet that says the documents do not give the answer."""
    return bool(_ABSTAIN.search(normalise(text)))


def grounded(text: str, sources: Sequence[str], generic: AbstractSet[str] = frozenset()) -> bool:
    """True when every number of `text` and most of its words occur in the cited source texts
    (`generic` words, which name a kind of thing, are not claims and are not counted)."""
    words = content_words(text, generic)
    available = set().union(*(content_words(s, generic) for s in sources)) if sources else set()
    numbers = {w for w in words if any(c.isdigit() for c in w)}
    if not numbers <= available:
        return False
    return not words or len(words & available) / len(words) >= MIN_GROUNDED_SHARE


# ---- one section of the answer, as the guards let it through -----------------------------------

NO_INFORMATION = "No relevant information found"
MISSING_SECTION = "Unable to generate an answer for this sub-question."
SectionStatus = Literal["answered", "no_information", "error"]


@dataclass(frozen=True)
class DroppedBullet:
    """A bullet the guards did not let through, and why."""

    text: str
    reason: str


@dataclass(frozen=True)
class SectionVerdict:
    """What one section may show: its bullets (citations appended), the pages it cites, and every
    intervention the guards made on the LM's section."""

    status: SectionStatus
    bullets: tuple[str, ...]
    sources: tuple[CitedSource, ...]
    removed_citations: tuple[RemovedCitation, ...] = ()
    dropped: tuple[DroppedBullet, ...] = ()
    rendered_out: tuple[str, ...] = ()
    # the bullets the LM wrote when over the cap, and the cap
    bullets_given: int = 0
    max_bullets: int = 0
    # bullets cut at MAX_BULLET_TEXT_CHARS: (bullet number, its length before the cut)
    cut: tuple[tuple[int, int], ...] = ()


def build_section(
    index: int,
    sub_question: str,
    chunks: Sequence[ChunkHit],
    section: AnswerSection | None,
    allowed: Collection[str] | None,
    max_bullets: int,
    vocabulary: Vocabulary,
) -> SectionVerdict:
    """The section the guards let through from the LM's `section` for the chunks shown for it.

    No chunk shown: "no relevant information". No usable section from the LM: an error section.
    Otherwise each of the first `max_bullets` bullets keeps only citations of pages shown for this
    section and inside `allowed`; a bullet is dropped when it is empty, restates the question, is
    not supported by the pages it cites (an uncited one: by any chunk shown, unless it abstains),
    lost every citation it had, or repeats an earlier bullet. The corpus's generic words are not
    counted as claims. Bullet text is sanitised (`sanitise`) and cut at MAX_BULLET_TEXT_CHARS first.
    """
    if not chunks:
        return SectionVerdict("no_information", (NO_INFORMATION,), ())
    if section is None or not section.bullets:
        return SectionVerdict("error", (), ())
    shown = shown_sources(chunks)
    page_texts: dict[tuple[str, int], list[str]] = {}
    for hit in chunks:
        page_texts.setdefault((hit.chunk.document_id, hit.chunk.page), []).append(hit.chunk.text)
    all_texts = [hit.chunk.text for hit in chunks]
    bullets: list[str] = []
    cited: dict[tuple[str, int], CitedSource] = {}
    removed: list[RemovedCitation] = []
    dropped: list[DroppedBullet] = []
    rendered_out: list[str] = []
    cut: list[tuple[int, int]] = []
    seen: set[str] = set()
    for number, bullet in enumerate(section.bullets[:max_bullets]):
        sources: list[CitedSource] = []
        for citation in bullet.citations:
            verdict = check_citation(index, citation.filename, citation.page, shown, allowed)
            if isinstance(verdict, RemovedCitation):
                removed.append(verdict)
            else:
                sources.append(verdict)
        clean = sanitise(strip_inline_citations(bullet.text), MAX_BULLET_TEXT_CHARS)
        text = clean.text
        rendered_out.extend(clean.removed)
        if clean.cut_from is not None:
            cut.append((number, clean.cut_from))
        problem = _unsupported(text, sub_question, sources, page_texts, all_texts, vocabulary.generic)
        if problem is None and bullet.citations and not sources:
            # it claimed support from pages it was never shown: drop it, not just its citations
            problem = "every citation was removed"
        normalised = normalise(text)
        if problem is None and normalised in seen:
            problem = "repeats an earlier bullet"
        if problem is not None:
            dropped.append(DroppedBullet(text[:80], problem))
            continue
        seen.add(normalised)
        for source in sources:
            cited.setdefault((source.document_id, source.page), source)
        labels = dict.fromkeys(citation_label(s.filename, s.page) for s in sources)
        bullets.append(" ".join([text, *labels]))
    given = len(section.bullets) if len(section.bullets) > max_bullets else 0
    answered = SectionVerdict(
        "answered",
        tuple(bullets),
        tuple(cited.values()),
        tuple(removed),
        tuple(dropped),
        tuple(rendered_out),
        given,
        max_bullets,
        tuple(cut),
    )
    return answered if bullets else replace(answered, status="no_information", bullets=(NO_INFORMATION,), sources=())


def _unsupported(
    text: str,
    sub_question: str,
    sources: Sequence[CitedSource],
    page_texts: dict[tuple[str, int], list[str]],
    all_texts: Sequence[str],
    generic: AbstractSet[str],
) -> str | None:
    """Why a bullet may not be shown (None: it may): empty, a restated question, or not
    supported by the pages it cites (an uncited bullet: by any chunk shown, unless it abstains)."""
    if not text:
        return "empty"
    if restates_question(text, sub_question, generic):
        return "restates the question"
    if sources:
        cited_texts = [t for s in sources for t in page_texts.get((s.document_id, s.page), [])]
        return None if grounded(text, cited_texts, generic) else "not supported by the cited pages"
    if is_abstention(text) or grounded(text, all_texts, generic):
        return None
    return "uncited and not supported by the chunks shown"
