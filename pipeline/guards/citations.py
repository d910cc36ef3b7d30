"""Citations: a citation must name a page of a chunk shown for its own section, inside scope."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

from pipeline.escapes import short_name
from pipeline.types import ChunkHit, Document, Entity

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


def citation_name(document: Document, entities: Mapping[str, Entity]) -> str:
    """The document as a reader knows it, for its citations: a filing's company, form and period ("Acme Widgets
    Inc. 10-X, quarter ended July 1, 2023") where its owner and its attributes `form` and `period_end` give them,
    else its title ("Supply Agreement with Norvane LLC"); "" when it has neither (a citation then shows its file
    name). One line of at most MAX_CITATION_NAME characters."""
    attributes = dict(document.attributes)
    owner = entities.get(document.entity_ids[0]) if document.entity_ids else None
    ended = _written_day(attributes.get("period_end", ""))
    form = attributes.get("form", "")
    if owner is not None and form and ended:
        if attributes.get("fiscal_period"):
            span = "quarter"
        elif attributes.get("fiscal_year"):
            span = "year"
        else:
            span = "period"
        return short_name(f"{owner.name} {form}, {span} ended {ended}")
    title = short_name(document.title)
    return "" if _from_file_name(title, document.filename) else title


def _from_file_name(title: str, filename: str) -> bool:
    """Whether `title` says no more than the file name: empty, or every word of it a word of the name (an index
    build titles a document without one by its file name, sanitised)."""
    words = re.findall(r"\w+", title.casefold())
    return not words or set(words) <= set(re.findall(r"\w+", filename.casefold()))


def _written_day(iso: str) -> str:
    """ "2023-07-01" -> "July 1, 2023" ("" for anything else)."""
    try:
        day = date.fromisoformat(iso)
    except ValueError:
        return ""
    return f"{day:%B} {day.day}, {day.year}"


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
