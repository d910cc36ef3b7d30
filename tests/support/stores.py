"""Stores for tests: one built from a few files, and a fake recording each search (with scripted failures)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.settings import BuildSettings
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from pipeline.types import ChunkHit, DocumentHit, SearchMode


def store_of(root: Path, files: Mapping[str, str], settings: BuildSettings | None = None) -> Store:
    """A store over `files` (relative path -> text) written to `root`/corpus, built with the hash embedder."""
    source = root / "corpus"
    source.mkdir()
    for name, text in files.items():
        (source / name).write_text(text, encoding="utf-8")
    build_index(source, root / "index", HashEmbedder(32), settings=settings)
    return open_store(root / "index", HashEmbedder(32))


class RecordingStore:
    """Delegates to `store`; records every search (mode, k, weights, depths, HyDE passage, documents
    found) and raises the scripted `failures` from document search first (a remote store's failure modes)."""

    def __init__(self, store: Store, failures: Sequence[Exception] = ()) -> None:
        self.store = store
        self.catalog = store.catalog
        self.entity_document_ids = store.entity_document_ids
        self.in_every_document = store.in_every_document
        self.calls: list[dict[str, Any]] = []
        self.failures = list(failures)

    def search_documents(
        self,
        query: str,
        k: int = 10,
        document_ids: Sequence[str] | None = None,
        mode: SearchMode = "hybrid",
        weights: dict[str, float] | None = None,
        depths: Mapping[str, int] | None = None,
    ) -> list[DocumentHit]:
        call: dict[str, Any] = {"op": "documents", "query": query, "k": k, "mode": mode, "weights": weights}
        self.calls.append(call)
        if self.failures:
            raise self.failures.pop(0)
        found = self.store.search_documents(query, k, document_ids, mode, weights, depths)
        call["found"] = [h.document.document_id for h in found]
        return found

    def search_chunks(
        self,
        query: str,
        k: int = 10,
        document_ids: Sequence[str] | None = None,
        mode: SearchMode = "hybrid",
        weights: dict[str, float] | None = None,
        dense_query: str | None = None,
        depths: Mapping[str, int] | None = None,
        page_weight: float = 0.0,
        figure_weight: float = 0.0,
    ) -> list[ChunkHit]:
        self.calls.append(
            {
                "op": "chunks",
                "query": query,
                "mode": mode,
                "weights": weights,
                "depths": depths,
                "dense": dense_query,
                "page_weight": page_weight,
                "figure_weight": figure_weight,
            }
        )
        return self.store.search_chunks(
            query, k, document_ids, mode, weights, dense_query, depths, page_weight, figure_weight
        )
