"""Citations: a citation must name a page of a chunk shown for its own section, inside scope."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from pipeline.guards.sanitise import markdown_literal
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
    """The inline form of a citation: [filename, page N], the file name escaped as Markdown text (a name is
    data: `rent](https:x).md` must not make a link)."""
    return f"[{markdown_literal(filename)}, page {page}]"


def check_source(
    section: int, source: CitedSource, shown: Sequence[CitedSource], allowed: Collection[str] | None
) -> CitedSource | RemovedCitation:
    """`source` when it is a page of a document shown for this section and inside `allowed` (None: every
    catalogued document), else the reason it must go; matched by document id and page."""
    if not any(s.document_id == source.document_id and s.page == source.page for s in shown):
        return RemovedCitation(section, source.filename, source.page, "not_shown_for_section")
    if allowed is not None and source.document_id not in allowed:
        return RemovedCitation(section, source.filename, source.page, "out_of_scope")
    return source
