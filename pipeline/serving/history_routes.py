"""/v1/history: recent questions, one question's trace, its sources with snippets, and its cited pages.

A page is served only through the answer that showed it (`access.page_refusal`): the history id names
a trace recorded by this server, and the trace says which documents the question's scope allowed and
which the answer showed. Anything else is a 404 that does not say whether the document exists.
"""

from __future__ import annotations

import logging
from pathlib import PurePath

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import Response

from pipeline.errors import InputFileError, ScopeRagError
from pipeline.evaluation.history import HistoryEntry
from pipeline.guards.ids import is_canonical_uuid
from pipeline.guards.sanitise import sanitised_text
from pipeline.program.trace import QuestionTrace
from pipeline.serving.access import (
    cited_rows,
    kept_pages,
    page_quotes,
    page_refusal,
    recorded_sections,
    section_sources,
)
from pipeline.serving.pages import chunks_at, page_content, pdf_boxes, render_pdf_page, snippet
from pipeline.serving.schemas import (
    AnswerSources,
    BoxOut,
    ErrorResponse,
    HistoryDetail,
    HistoryItem,
    HistoryList,
    PageView,
    SectionSources,
    SegmentOut,
    SourceOut,
)
from pipeline.serving.scope_text import scope_out
from pipeline.serving.state import LockedHistory, ServingState
from pipeline.types import Chunk, Document

log = logging.getLogger(__name__)

MAX_LISTED = 100
MAX_SEARCH_CHARS = 200
MAX_FILENAME_CHARS = 300
NOT_SERVED = "no such page among this answer's sources"


def history_router(state: ServingState) -> APIRouter:
    """The history endpoints of one app, bound to its state."""
    router = APIRouter(
        prefix="/v1/history",
        tags=["history"],
        responses={404: {"model": ErrorResponse, "description": "No such entry or page, or no history kept"}},
    )

    def history() -> LockedHistory:
        return served_history(state)

    def entry(history_id: str) -> HistoryEntry:
        return history_entry(state, history_id)

    def cited_page(
        history_id: str, document_id: str, page: int, section: int | None
    ) -> tuple[Document, list[Chunk], QuestionTrace]:
        """The document, the chunks cited on that page and the answer's trace, when this answer may open the
        page; else 404."""
        trace = entry(history_id).trace
        document = state.store.catalog.documents.get(document_id)
        refusal = (
            "unknown document"
            if document is None
            else page_refusal(trace, document_id, page, document.page_count, state.store)
        )
        if document is None or refusal is not None:
            log.info("page refused: %s page %s of answer %s: %s", document_id[:40], page, history_id, refusal)
            raise HTTPException(404, NOT_SERVED)
        return document, chunks_at(state.store, cited_rows(trace, document_id, page, section), document_id, page), trace

    @router.get("")
    def recent(
        limit: int = Query(20, ge=1, le=MAX_LISTED),
        q: str | None = Query(None, max_length=MAX_SEARCH_CHARS, description="Only questions holding these words"),
        every: bool = Query(False, alias="all", description="Questions asked of every index, not only this one's"),
    ) -> HistoryList:
        """The latest questions asked of the index this server serves (of every index with `all`), newest first
        (those holding `q`, when given)."""
        found = history().recent(limit, containing=q.strip() if q else None, every=every)
        return HistoryList(entries=[_item(state, e) for e in found])

    @router.get("/{history_id}")
    def one(history_id: str) -> HistoryDetail:
        """One question's answer and whole trace: plan, chunks per sub-question, guards, LM calls, time."""
        found = entry(history_id)
        return HistoryDetail(entry=_item(state, found), answer=found.answer, trace=found.trace.model_dump(mode="json"))

    @router.get("/{history_id}/sources")
    def sources(history_id: str) -> AnswerSources:
        """Each section's sources with a snippet of the chunk kept on each."""
        trace = entry(history_id).trace
        cited = {(s.document_id, s.page) for section in recorded_sections(trace) for s in section.sources}
        read = [
            SourceOut(
                document_id=document_id,
                filename=sanitised_text(state.store.catalog.documents[document_id].filename, MAX_FILENAME_CHARS),
                page=page,
                snippet=snippet(chunks_at(state.store, cited_rows(trace, document_id, page), document_id, page)),
            )
            for document_id, page in kept_pages(trace)
            if (document_id, page) not in cited and document_id in state.store.catalog.documents
        ]
        sections = [
            SectionSources(
                index=section.index,
                sources=[
                    SourceOut(
                        document_id=source.document_id,
                        filename=source.filename,
                        page=source.page,
                        snippet=snippet(chunks_at(state.store, rows, source.document_id, source.page)),
                    )
                    for source, rows in pairs
                ],
            )
            for section, pairs in section_sources(trace)
        ]
        return AnswerSources(history_id=history_id, sections=sections, read=read)

    @router.get("/{history_id}/pages/{document_id}/{page}")
    def page_view(
        history_id: str,
        document_id: str,
        page: int,
        section: int | None = Query(None, ge=0, description="Mark the chunks kept for this section only"),
    ) -> PageView:
        """A cited page: its text with the kept chunks shaded and the quoted sentences and answer line marked, and
        for a PDF the URL of its image (marked the same way)."""
        document, cited, trace = cited_page(history_id, document_id, page, section)
        quotes, answers = page_quotes(trace, document_id, page, section)
        content = page_content(state.store, state.corpus, document, page, cited, quotes, answers)
        is_pdf = _is_pdf(document)
        image, boxes = None, []
        if is_pdf and content.original is not None:
            query = "" if section is None else f"?section={section}"
            image = f"/v1/history/{history_id}/pages/{document_id}/{page}/image{query}"
            boxes = [BoxOut(**vars(box)) for box in pdf_boxes(content.original, page, cited, quotes, answers)]
        return PageView(
            document_id=document_id,
            filename=document.filename,
            page=page,
            pages=document.page_count,
            kind="pdf" if is_pdf else "text",
            lines=[[SegmentOut(text=s.text, cited=s.cited, mark=s.mark) for s in line] for line in content.lines],
            image=image,
            boxes=boxes,
            note=content.note,
        )

    @router.get(
        "/{history_id}/pages/{document_id}/{page}/image",
        response_class=Response,
        responses={200: {"content": {"image/png": {}}}},
    )
    def page_image(history_id: str, document_id: str, page: int, section: int | None = Query(None, ge=0)) -> Response:
        """A cited PDF page as PNG, the cited chunks highlighted."""
        document, cited, trace = cited_page(history_id, document_id, page, section)
        quotes, answers = page_quotes(trace, document_id, page, section)
        content = page_content(state.store, state.corpus, document, page, cited)
        if content.original is None or not _is_pdf(document):
            raise HTTPException(404, "no image of this page: it is not a PDF, or its file is not available")
        try:
            png = render_pdf_page(content.original, page, cited, quotes, answers)
        except InputFileError as exc:
            log.warning("page image: %s", exc)
            raise HTTPException(404, "no image of this page: its file cannot be drawn") from exc
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})

    return router


def _is_pdf(document: Document) -> bool:
    return document.relpath.lower().endswith(".pdf")


def served_history(state: ServingState) -> LockedHistory:
    """The server's question history; 404 when it keeps none."""
    if state.history is None:
        raise HTTPException(404, "this server keeps no question history (start it with --history)")
    return state.history


def history_entry(state: ServingState, history_id: str) -> HistoryEntry:
    """The entry of a full canonical history id (the history's own lookup also takes prefixes); else 404."""
    if not is_canonical_uuid(history_id):
        raise HTTPException(404, "no such history entry")
    try:
        found = served_history(state).get(history_id)
    except ScopeRagError:
        raise HTTPException(404, "no such history entry") from None
    if found.history_id != history_id:
        raise HTTPException(404, "no such history entry")
    return found


def _item(state: ServingState, entry: HistoryEntry) -> HistoryItem:
    return HistoryItem(
        history_id=entry.history_id,
        created_at=entry.created_at,
        question=entry.question,
        scope=scope_out(state.store.catalog, entry.trace.scope, entry.trace.implicit_scope),
        status=entry.status,
        lm_calls=entry.lm_calls,
        tokens=entry.tokens,
        seconds=entry.seconds,
        index=_index_name(state, entry),
    )


def _index_name(state: ServingState, entry: HistoryEntry) -> str | None:
    """The folder name of the index a question was asked of; None for this server's own (or not recorded)."""
    if entry.index is None or state.history is None or entry.index == state.history.index:
        return None
    return PurePath(entry.index).name
