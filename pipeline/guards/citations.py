"""The citation check: a citation must name a chunk shown for its own section, inside scope."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from pipeline.types import ChunkHit

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
    """The inline form of a citation: [filename, page N]."""
    return f"[{filename}, page {page}]"


# ---- is a bullet supported by what it cites? ------------------------------------------------

_FILLER = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with "
    "what which who whom how when where does do did there their they per any all also been being than then "
    "into over under about after before between such these those property premises document documents".split()
)
_WORD = re.compile(r"[0-9a-z]+(?:[.,/][0-9a-z]+)*")
_ABSTAIN = re.compile(r"\b(?:not (?:stated|say|mention|given|found|available|specified)|no (?:information|mention))\b")
# Share of a bullet's content words that must appear in the pages it cites.
MIN_GROUNDED_SHARE = 0.6


def content_words(text: str) -> set[str]:
    """Case-folded words and numbers of `text` minus filler words (numbers lose their commas)."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return {w.replace(",", "") for w in words if (w not in _FILLER and len(w) > 1) or w.isdigit()}


def restates_question(text: str, question: str) -> bool:
    """True when a bullet says nothing beyond the words of the question it answers."""
    words = content_words(text)
    return not words or words <= content_words(question)


def is_abstention(text: str) -> bool:
    """True for a bullet that says the documents do not give the answer."""
    return bool(_ABSTAIN.search(text.casefold()))


def grounded(text: str, sources: Sequence[str]) -> bool:
    """True when every number of `text` and most of its words occur in the cited source texts."""
    words = content_words(text)
    available = set().union(*(content_words(s) for s in sources)) if sources else set()
    numbers = {w for w in words if any(c.isdigit() for c in w)}
    if not numbers <= available:
        return False
    return not words or len(words & available) / len(words) >= MIN_GROUNDED_SHARE
