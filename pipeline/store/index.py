"""An opened index: catalog plus chunk- and document-level BM25 and dense search."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pipeline.entities import contains_term
from pipeline.errors import (
    EmbedderError,
    IndexCorruptError,
    SkippedDocumentError,
    UnknownDocumentError,
    UnknownScopeError,
)
from pipeline.guards.ids import id_problem
from pipeline.retrieval.bm25 import BM25Index
from pipeline.retrieval.dense import DenseIndex
from pipeline.retrieval.fusion import reciprocal_rank_fusion
from pipeline.store.catalog import Catalog
from pipeline.store.embedders import Embedder, deferred_embedder
from pipeline.store.generations import IndexManifest, open_generation
from pipeline.store.pages import PageIndex
from pipeline.text import bm25_tokens, normalise
from pipeline.types import ChunkHit, DocumentHit, Entity, SearchMode, TableRow
from pipeline.values.periods import Period, document_periods

# How deep each retriever looks before fusion, relative to k.
FUSION_DEPTH = 4
FUSION_MIN_DEPTH = 40


def document_search_text(filename: str, title: str, summary: str) -> str:
    """What document-level search indexes: filename, title and summary."""
    return f"{filename}\n{title}\n{summary}"


@dataclass
class StoreCall:
    """One call that reached the store, as recorded for tests and traces."""

    operation: str
    document_ids: tuple[str, ...] | None
    query: str


@dataclass
class Store:
    """Search over one published index generation."""

    manifest: IndexManifest
    catalog: Catalog
    embedder: Embedder
    chunk_bm25: BM25Index
    chunk_dense: DenseIndex
    document_bm25: BM25Index
    document_dense: DenseIndex
    # Page-level BM25 (None: a generation built without one).
    pages: PageIndex | None = None
    # Set to a list to record every call that reaches the store (tests, traces).
    call_log: list[StoreCall] | None = None

    def __deepcopy__(self, memo: dict[int, object]) -> Store:
        return self  # read-only and heavy: optimizers deep-copy programs that hold it

    def _record(self, operation: str, document_ids: Sequence[str] | None, query: str) -> None:
        if self.call_log is not None:
            ids = None if document_ids is None else tuple(document_ids)
            self.call_log.append(StoreCall(operation, ids, query))

    # -- scope -----------------------------------------------------------------------------

    def check_document_ids(self, document_ids: Sequence[str]) -> list[str]:
        """The ids unchanged; UnknownScopeError naming every non-canonical or unknown one."""
        bad = [d for d in document_ids if id_problem(d, self.catalog.documents.keys()) is not None]
        if bad:
            raise UnknownScopeError("document id", [repr(b) for b in bad])
        return list(document_ids)

    def document_ids_for(self, references: Sequence[str], where: str = "") -> list[str]:
        """The document id of each reference, given as a document id or as a path relative to the
        corpus folder; UnknownDocumentError names every reference that is neither, and both forms."""
        documents = self.catalog.documents
        by_path = {d.relpath: d.document_id for d in documents.values()}
        out, unknown = [], []
        skipped = {r: self.catalog.skipped[r] for r in references if r in self.catalog.skipped}
        if skipped:
            raise SkippedDocumentError(skipped, where)
        for reference in references:
            if id_problem(reference, documents.keys()) is None:
                out.append(reference)
            elif reference in by_path:
                out.append(by_path[reference])
            else:
                unknown.append(repr(reference))
        if unknown:
            first = next(iter(documents.values()), None)
            raise UnknownDocumentError(
                unknown, first.document_id if first else None, first.relpath if first else None, where
            )
        return out

    def resolve_entity(self, name_or_id: str) -> Entity:
        """The entity whose id, slug, name or alias equals `name_or_id` (NFKC, case-folded)."""
        wanted = normalise(name_or_id)
        for entity in self.catalog.entities.values():
            keys = {entity.entity_id, entity.slug, *(normalise(n) for n in entity.names)}
            if wanted in keys or name_or_id in keys:
                return entity
        known = ", ".join(e.slug for e in self.catalog.entities.values())
        raise UnknownScopeError(self.catalog.entity_kind, [f"{name_or_id!r} (known: {known})"])

    def entity_document_ids(self, entity_id: str) -> list[str]:
        """Documents related to the entity in the catalog (the one scope query)."""
        if entity_id not in self.catalog.entities:
            raise UnknownScopeError(self.catalog.entity_kind, [entity_id])
        return self.catalog.document_ids_for_entity(entity_id)

    def entity_scope(self, entity_id: str) -> list[str]:
        """The documents in the entity's scope, in catalog order: those the catalog says it owns, and
        those no entity owns that the manifest shares with every entity."""
        owned = set(self.entity_document_ids(entity_id))
        return [d.document_id for d in self.catalog.documents.values() if d.document_id in owned or d.shared]

    def in_every_document(self, term: str) -> bool:
        """Whether `term` (as one index term) occurs in every document of a corpus of several: it then
        names what the documents are (their form, their kind), not what one passage says."""
        tokens = bm25_tokens(term)
        count = len(self.catalog.documents)
        if not tokens or count < 2:
            return False
        rows = self.chunk_bm25.rows_with(tokens[0])
        return len(np.unique(self.catalog.row_document[rows])) == count

    def mentions(self, term: str, document_ids: Sequence[str] | None = None, limit: int = 400) -> bool:
        """Whether some chunk (of `document_ids` when given) holds `term` as whole words (case, width, accents
        and punctuation folded): the chunks holding each of its index terms are read, at most `limit` of them."""
        tokens = bm25_tokens(term)
        if not tokens:
            return False
        rows = self.chunk_bm25.rows_with(tokens[0])
        for token in tokens[1:]:
            rows = np.intersect1d(rows, self.chunk_bm25.rows_with(token), assume_unique=True)
        if document_ids is not None:
            rows = np.intersect1d(rows, self.catalog.rows_for_documents(self.check_document_ids(document_ids)))
        chunks = self.catalog.chunks([int(r) for r in rows[:limit]])
        return any(contains_term(chunk.text, term) for chunk in chunks) or len(rows) > limit

    # -- tables --------------------------------------------------------------------------------

    def document_rows(self, document_id: str) -> list[TableRow]:
        """Every table row the readers found in a document, in document order."""
        return self.catalog.page_rows(document_id)

    def page_hits(self, document_id: str, page: int) -> list[ChunkHit]:
        """The chunks of one page as hits (score 0: found by reading the page, not by a search)."""
        filename = self.catalog.documents[document_id].filename
        return [ChunkHit(chunk, filename, 0.0) for chunk in self.catalog.page_chunks(document_id, page)]

    def first_hit(self, document_id: str) -> ChunkHit | None:
        """A document's first chunk as a hit (score 0), None when it has none."""
        position = self.catalog.document_position(document_id)
        start, end = int(self.catalog.row_start[position]), int(self.catalog.row_end[position])
        if end <= start:
            return None
        (chunk,) = self.catalog.chunks([start])
        return ChunkHit(chunk, self.catalog.documents[document_id].filename, 0.0)

    def owner_names(self, document_id: str) -> tuple[str, ...]:
        """Every name of the entities that own a document."""
        entities = self.catalog.entities
        owners = self.catalog.documents[document_id].entity_ids
        return tuple(name for e in owners if e in entities for name in entities[e].names)

    def document_periods(self, document_id: str) -> tuple[Period, ...]:
        """The periods a document's attributes state (its fiscal period, its period's end)."""
        return document_periods(self.catalog.documents[document_id].attributes)

    # -- search ----------------------------------------------------------------------------

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
        """Top k chunks for `query`, inside `document_ids` when given (still k if they hold k).

        `dense_query` (e.g. a HyDE passage) replaces `query` for the dense half only; `depths`
        ("bm25", "dense") sets how deep each retriever looks before fusion (never below k). A
        `page_weight` above 0 fuses in the page index's ranking with that weight (not in dense mode);
        `figure_weight` favours pages of figures there (pipeline.store.pages.PageIndex.ranked_chunks).
        """
        self._record("search_chunks", document_ids, query)
        rows = None if document_ids is None else self.catalog.rows_for_documents(self.check_document_ids(document_ids))
        if self.pages is None or page_weight <= 0 or mode == "dense":
            ranked = self._hybrid(query, k, rows, self.chunk_bm25, self.chunk_dense, mode, weights, dense_query, depths)
        else:
            ranked = self._with_pages(
                query, k, rows, mode, weights, dense_query, depths, (self.pages, page_weight, figure_weight)
            )
        chunks = self.catalog.chunks([row for row, _, _ in ranked])
        return [
            ChunkHit(chunk, self.catalog.documents[chunk.document_id].filename, score, scores)
            for chunk, (_, score, scores) in zip(chunks, ranked, strict=True)
        ]

    def search_documents(
        self,
        query: str,
        k: int = 10,
        document_ids: Sequence[str] | None = None,
        mode: SearchMode = "hybrid",
        weights: dict[str, float] | None = None,
        depths: Mapping[str, int] | None = None,
    ) -> list[DocumentHit]:
        """Top k documents by filename, title and summary, inside `document_ids` when given."""
        self._record("search_documents", document_ids, query)
        rows = None
        if document_ids is not None:
            checked = self.check_document_ids(document_ids)
            rows = np.array(sorted(self.catalog.document_position(d) for d in set(checked)), dtype=np.int64)
        ranked = self._hybrid(query, k, rows, self.document_bm25, self.document_dense, mode, weights, None, depths)
        order = self.catalog.document_order
        return [DocumentHit(self.catalog.documents[order[row]], score, scores) for row, score, scores in ranked]

    def _with_pages(
        self,
        query: str,
        k: int,
        rows: npt.NDArray[np.int64] | None,
        mode: SearchMode,
        weights: dict[str, float] | None,
        dense_query: str | None,
        depths: Mapping[str, int] | None,
        weighted_pages: tuple[PageIndex, float, float],
    ) -> list[tuple[int, float, dict[str, float]]]:
        """The chunk ranking fused with the page index's (with its weight and figure weight), each
        page standing as its best chunk."""
        pages, page_weight, figure_weight = weighted_pages
        depth = max(k * FUSION_DEPTH, FUSION_MIN_DEPTH)
        found = self._hybrid(query, depth, rows, self.chunk_bm25, self.chunk_dense, mode, weights, dense_query, depths)
        order = [row for row, _, _ in found]
        rankings = {"chunks": order, "pages": pages.ranked_chunks(query, depth, rows, order, figure_weight)}
        fused = reciprocal_rank_fusion(rankings, weights={"pages": page_weight}, limit=k)
        scores = {row: s for row, _, s in found}
        return [(f.row, f.score, {**scores.get(f.row, {}), "rrf": f.score}) for f in fused]

    def _hybrid(
        self,
        query: str,
        k: int,
        rows: npt.NDArray[np.int64] | None,
        bm25: BM25Index,
        dense: DenseIndex,
        mode: SearchMode,
        weights: dict[str, float] | None,
        dense_query: str | None = None,
        depths: Mapping[str, int] | None = None,
    ) -> list[tuple[int, float, dict[str, float]]]:
        if rows is not None and len(rows) == 0:
            return []
        default = k if mode != "hybrid" else max(k * FUSION_DEPTH, FUSION_MIN_DEPTH)
        depth = {name: max(k, (depths or {}).get(name, default)) for name in ("bm25", "dense")}
        found: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]] = {}
        if mode in ("bm25", "hybrid"):
            found["bm25"] = bm25.search(query, depth["bm25"], rows)
        if mode in ("dense", "hybrid"):
            found["dense"] = dense.search(self.embedder([dense_query or query])[0], depth["dense"], rows)
        raw = {name: dict(zip(r.tolist(), s.tolist(), strict=True)) for name, (r, s) in found.items()}
        if mode != "hybrid":
            name = "bm25" if mode == "bm25" else "dense"
            return [(row, score, {name: score}) for row, score in raw[name].items()][:k]
        fused = reciprocal_rank_fusion({n: r.tolist() for n, (r, _) in found.items()}, weights=weights, limit=k)
        return [(f.row, f.score, {"rrf": f.score, **{n: raw[n][f.row] for n in f.ranks}}) for f in fused]


def open_store(index_dir: Path, embedder: Embedder | None = None, verify_hashes: bool = False) -> Store:
    """Open the published generation; IndexCorruptError if files disagree with the manifest. The index's own
    embedder (when `embedder` is None) is loaded on its first use."""
    manifest, root = open_generation(index_dir, verify_hashes=verify_hashes)
    if embedder is None:
        embedder = deferred_embedder(manifest.embedder)
    elif embedder.name != manifest.embedder:
        raise EmbedderError(
            f"index at {index_dir} was built with embedder '{manifest.embedder}', not '{embedder.name}'"
        )
    try:
        catalog = Catalog(root / "catalog.sqlite")
    except IndexCorruptError as exc:
        raise IndexCorruptError(str(index_dir), exc.problems) from None
    counts = {"documents": len(catalog.documents), "chunks": catalog.chunk_count}
    mismatched = [
        f"{k}: catalog has {v}, manifest says {manifest.counts.get(k)}"
        for k, v in counts.items()
        if manifest.counts.get(k) != v
    ]
    if mismatched:
        raise IndexCorruptError(str(index_dir), mismatched)
    chunk_dense = DenseIndex.load(root / "chunks_dense", manifest.dense_kind)
    document_dense = DenseIndex.load(root / "documents_dense", "flat")
    if chunk_dense.size != catalog.chunk_count or document_dense.size != len(catalog.documents):
        raise IndexCorruptError(str(index_dir), ["dense index sizes disagree with the catalog"])
    return Store(
        manifest=manifest,
        catalog=catalog,
        embedder=embedder,
        chunk_bm25=BM25Index.load(root / "chunks_bm25", catalog.chunk_count),
        chunk_dense=chunk_dense,
        document_bm25=BM25Index.load(root / "documents_bm25", len(catalog.documents)),
        document_dense=document_dense,
        pages=PageIndex.load(root, catalog.chunk_count),
    )
