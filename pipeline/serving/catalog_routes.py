"""/v1/entities and /v1/documents: the scope picker's choices (entities, and documents found by search)."""

from __future__ import annotations

from pathlib import PurePosixPath

from fastapi import APIRouter, HTTPException, Query

from pipeline.errors import UnknownScopeError
from pipeline.guards.sanitise import sanitised_text
from pipeline.serving.schemas import DocumentList, DocumentOut, EntityList, EntityOut, ErrorResponse
from pipeline.serving.state import ServingState
from pipeline.types import Document

MAX_SEARCH_CHARS = 200
MAX_RESULTS = 50
MAX_DISPLAY_CHARS = 300


def catalog_router(state: ServingState) -> APIRouter:
    """The catalog endpoints of one app, bound to its state."""
    router = APIRouter(tags=["catalog"])

    @router.get("/v1/entities")
    def entities() -> EntityList:
        """Every entity that owns documents, and what the catalog calls them (e.g. "property")."""
        catalog = state.store.catalog
        return EntityList(
            kind=sanitised_text(catalog.entity_kind, MAX_DISPLAY_CHARS),
            entities=[
                EntityOut(entity_id=e.entity_id, name=sanitised_text(e.name, MAX_DISPLAY_CHARS), slug=e.slug)
                for e in catalog.entities.values()
            ],
        )

    @router.get("/v1/documents", responses={422: {"model": ErrorResponse, "description": "Unknown entity"}})
    def documents(
        q: str = Query(min_length=1, max_length=MAX_SEARCH_CHARS, description="Words of a filename, title or summary"),
        entity: str | None = Query(None, min_length=1, max_length=MAX_SEARCH_CHARS, description="Only its documents"),
        k: int = Query(10, ge=1, le=MAX_RESULTS),
    ) -> DocumentList:
        """Documents found by filename, title and summary (the same search the program's first step runs)."""
        store = state.store
        within = None
        if entity is not None:
            try:
                within = store.entity_document_ids(store.resolve_entity(entity).entity_id)
            except UnknownScopeError as exc:
                raise HTTPException(422, str(exc)) from exc
        hits = store.search_documents(q, k=k, document_ids=within)
        return DocumentList(documents=[_document(state, hit.document) for hit in hits])

    return router


def _document(state: ServingState, document: Document) -> DocumentOut:
    entities = state.store.catalog.entities
    return DocumentOut(
        document_id=document.document_id,
        filename=sanitised_text(document.filename, MAX_DISPLAY_CHARS),
        folder=sanitised_text(PurePosixPath(document.relpath).parent.as_posix().removeprefix("."), MAX_DISPLAY_CHARS),
        title=sanitised_text(document.title, MAX_DISPLAY_CHARS),
        entities=[sanitised_text(entities[e].name, MAX_DISPLAY_CHARS) for e in document.entity_ids if e in entities],
        pages=document.page_count,
    )
