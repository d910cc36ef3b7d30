"""Which document pages a recorded answer may open: only pages, inside the question's scope, that the answer
itself showed (its sections' cited pages and the pages of the chunks kept for it).

The record is the question's trace from the history, looked up by its history id on the server, so a
client cannot widen what it may read by sending ids of its own. Every function here is pure.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from pydantic import ValidationError

from pipeline.errors import UnknownScopeError
from pipeline.guards.ids import is_canonical_uuid
from pipeline.intake.scope import Scope, ScopeCatalog, question_scope
from pipeline.program.events import Section
from pipeline.program.trace import QuestionTrace
from pipeline.types import SourceRef

log = logging.getLogger(__name__)


def recorded_sections(trace: QuestionTrace) -> list[Section]:
    """The answer's sections as recorded; a record that does not validate counts as no section."""
    sections = []
    for raw in trace.sections:
        try:
            sections.append(Section.model_validate(raw))
        except ValidationError:
            log.warning("a recorded section of %r does not validate; it is ignored", trace.question[:80])
    return sections


def kept_pages(trace: QuestionTrace) -> list[tuple[str, int]]:
    """(document id, page) of every page holding a chunk kept for the answer, in the order they were kept."""
    return list(dict.fromkeys((c.document_id, c.page) for sub in trace.sub_questions for c in sub.chunks if c.kept))


def _shown(trace: QuestionTrace) -> Iterator[tuple[str, int]]:
    for section in recorded_sections(trace):
        for source in section.sources:
            yield source.document_id, source.page
    yield from kept_pages(trace)


def shown_pages(trace: QuestionTrace) -> frozenset[tuple[str, int]]:
    """(document id, page) of every page the answer showed: cited in a section or holding a kept chunk."""
    return frozenset(_shown(trace))


def scope_documents(trace: QuestionTrace, catalog: ScopeCatalog) -> frozenset[str] | None:
    """The documents the recorded question's scope allowed (None: the whole catalog); ValidationError or
    UnknownScopeError when the recorded scope no longer resolves."""
    scope = Scope.model_validate(trace.scope)
    return question_scope(scope, catalog, trace.implicit_scope).allowed


def page_refusal(
    trace: QuestionTrace, document_id: str, page: int, page_count: int, catalog: ScopeCatalog
) -> str | None:
    """Why page `page` of `document_id` may not be opened from this answer; None when it may."""
    if not is_canonical_uuid(document_id):
        return "not a canonical document id"
    try:
        allowed = scope_documents(trace, catalog)
    except (ValidationError, UnknownScopeError):
        return "the question's recorded scope no longer resolves"
    if allowed is not None and document_id not in allowed:
        return "outside the question's scope"
    if not 1 <= page <= page_count:
        return f"the document has no page {page}"
    if (document_id, page) not in shown_pages(trace):
        return "not among the answer's cited or kept pages"
    return None


def cited_rows(trace: QuestionTrace, document_id: str, page: int, section: int | None = None) -> list[int]:
    """Index rows of the chunks kept on that page, for one sub-question (`section`) or for all."""
    rows: list[int] = []
    for sub in trace.sub_questions:
        if section is not None and sub.index != section:
            continue
        rows.extend(c.row for c in sub.chunks if c.kept and c.document_id == document_id and c.page == page)
    return list(dict.fromkeys(rows))


def section_sources(trace: QuestionTrace) -> list[tuple[Section, list[tuple[SourceRef, list[int]]]]]:
    """Each recorded section with its sources, and for each source the rows of the chunks kept on it."""
    return [
        (section, [(s, cited_rows(trace, s.document_id, s.page, section.index)) for s in section.sources])
        for section in recorded_sections(trace)
    ]


def page_quotes(
    trace: QuestionTrace, document_id: str, page: int, section: int | None = None
) -> tuple[list[str], list[str]]:
    """The evidence sentences the answer quotes from that page (for one section, or all), and the answer lines
    resting on them."""
    quotes: list[str] = []
    answers: list[str] = []
    for recorded in recorded_sections(trace):
        if section is not None and recorded.index != section:
            continue
        here = [e.text for e in recorded.evidence if e.source.document_id == document_id and e.source.page == page]
        quotes.extend(here)
        if here and recorded.status == "answered" and recorded.answer:
            answers.append(recorded.answer)
    return list(dict.fromkeys(quotes)), list(dict.fromkeys(answers))
