"""The retrieval tools: retrieve_docs and retrieve_chunks with the scope, the document-id
guard and the entity gate inside them. No id that is not canonical, known and in scope ever
reaches a store call; store failures come back as typed tool errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pipeline.entities import without_mentions
from pipeline.errors import RetrievalRateLimitedError, ScopeRagError, ScopeViolationError, UnknownScopeError
from pipeline.execution.tool_loop import ContextSource, ToolResult, ToolSpec
from pipeline.guards.entity_gate import (
    ChunkExclusion,
    DocumentVerdict,
    Exclusion,
    chunk_backstop,
    gate,
    gate_inputs,
    pair_documents,
)
from pipeline.guards.ids import IdRejection, filter_document_ids, id_problem
from pipeline.intake.scope import QuestionScope
from pipeline.retrieval.fusion import reciprocal_rank_fusion
from pipeline.settings import CoreConfig
from pipeline.types import ChunkHit, Document, DocumentHit, Entity, SearchMode
from pipeline.values.periods import Period, asked_from_labels, document_periods, preferred_documents
from pipeline.vocabulary import Vocabulary

log = logging.getLogger(__name__)

T = TypeVar("T")
# retrieve_docs searches this many times k before the entity gate, then keeps k.
GATE_DEPTH = 2


class CatalogView(Protocol):
    @property
    def documents(self) -> Mapping[str, Document]: ...

    @property
    def entities(self) -> Mapping[str, Entity]: ...

    @property
    def vocabulary(self) -> Vocabulary: ...


class SearchStore(Protocol):
    """What the executor needs from a store (pipeline.store.Store satisfies it)."""

    @property
    def catalog(self) -> CatalogView: ...

    def search_documents(
        self,
        query: str,
        k: int = 10,
        document_ids: Sequence[str] | None = None,
        mode: SearchMode = "hybrid",
        weights: dict[str, float] | None = None,
        depths: Mapping[str, int] | None = None,
    ) -> list[DocumentHit]: ...

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
    ) -> list[ChunkHit]: ...

    def entity_document_ids(self, entity_id: str) -> list[str]: ...

    def entity_scope(self, entity_id: str) -> list[str]: ...

    def in_every_document(self, term: str) -> bool: ...


@dataclass(frozen=True)
class SearchSettings:
    """How the tools search during one round: retrievers, fusion, depth, document count, gate inputs.

    `dense_query` (a HyDE passage) replaces the query for dense chunk search only (BM25 keeps
    the words asked); `documents_k` None means the planner's default number of documents.
    """

    mode: SearchMode = "hybrid"
    weights: Mapping[str, float] | None = None
    depths: Mapping[str, int] | None = None
    dense_query: str | None = None
    documents_k: int | None = None
    gate_entity_ids: tuple[str, ...] = ()
    doc_type_hint: frozenset[str] = frozenset()
    # The entities the question names together (the gate's pair rule); () when it names fewer than two.
    together_entity_ids: tuple[str, ...] = ()
    # The periods the question names (labels, pipeline.values.periods): their documents are preferred.
    periods: tuple[str, ...] = ()
    # Whether the page ranking favours pages of figures (CoreConfig.figure_weight): only for a question asking a
    # figure; an auditor's name or a clause is on a page of prose.
    figures: bool = True

    @property
    def gate_key(self) -> tuple[tuple[str, ...], frozenset[str], tuple[str, ...]]:
        """What the entity gate's verdict on a document depends on besides the document."""
        return self.gate_entity_ids, self.doc_type_hint, self.together_entity_ids


@dataclass
class ToolRecorder:
    """What the tools recorded during the current call: id rejections and the ids sent."""

    rejections: list[IdRejection] = field(default_factory=list)
    sent: tuple[str, ...] | None = None


def _store_call(fn: Callable[[], T]) -> ToolResult[T]:
    """The store's answer as a ToolResult; store failures become typed errors."""
    try:
        return ToolResult.success(fn())
    except RetrievalRateLimitedError as exc:
        log.warning("store rate limited: %s", exc)
        return ToolResult.failure("rate_limited", str(exc))
    except UnknownScopeError as exc:
        log.warning("store refused document ids: %s", exc)
        return ToolResult.failure("invalid_param", str(exc))
    except (ScopeRagError, OSError) as exc:
        log.warning("store unavailable: %s", exc)
        return ToolResult.failure("unavailable", str(exc))


def _int_arg(args: Mapping[str, object], name: str, default: int) -> int:
    value = args.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 100 else default


class RetrievalTools:
    """retrieve_docs and retrieve_chunks for one question: scope, id guard and entity gate
    inside each tool, so no caller (plan executor or LM agent) can get past them. The gate
    judges each document once per question (per set of gate inputs)."""

    def __init__(self, store: SearchStore, scope: QuestionScope, config: CoreConfig, search: SearchSettings) -> None:
        self.store, self.scope, self.config = store, scope, config
        self.search = search
        self.known = frozenset(store.catalog.documents)
        self.allowed = scope.allowed
        self.decided: dict[tuple[tuple[str, ...], frozenset[str], tuple[str, ...]], dict[str, bool]] = {}
        self.gate_exclusions: list[Exclusion] = []
        self.gate_verdicts: list[DocumentVerdict] = []
        self.selected = frozenset(scope.scope.document_ids)
        self.relaxed: list[str] = []
        self.chunk_exclusions: list[ChunkExclusion] = []
        self.empty_searches: set[str] = set()
        # Every document id a store call received over the question (stop_conditions.max_total_docs).
        self.sent_documents: dict[str, None] = {}
        self.recorder = ToolRecorder()
        self._periods: dict[str, tuple[Period, ...]] = {}
        self._family: dict[str, tuple[str, ...]] | None = None

    def _gate_inputs(self) -> tuple[tuple[Entity, ...], tuple[Entity, ...]]:
        return gate_inputs(self.search.gate_entity_ids, self.store.catalog.entities)

    def _record_sent(self, ids: tuple[str, ...] | None) -> None:
        self.recorder.sent = ids
        self.sent_documents.update(dict.fromkeys(ids or ()))

    def tools(self) -> list[ToolSpec]:
        """The two tools for a ToolLoop."""
        return [
            ToolSpec("retrieve_docs", self.retrieve_docs, ("query",)),
            ToolSpec("retrieve_chunks", self.retrieve_chunks, ("query", "document_ids")),
        ]

    def ensure_sendable(self, ids: Sequence[str]) -> tuple[str, ...]:
        """`ids` unchanged, or ScopeViolationError: the last line before the store."""
        bad = [repr(d) for d in ids if id_problem(d, self.known, self.allowed) is not None]
        if bad:
            raise ScopeViolationError(bad)
        return tuple(ids)

    def _gate(self, documents: Sequence[Document]) -> list[str]:
        """Ids the entity gate keeps, newly judged ones in the gate's order; each document is
        judged once per question, so an exclusion is recorded once."""
        decided = self.decided.setdefault(self.search.gate_key, {})
        fresh = [d for d in dict((d.document_id, d) for d in documents).values() if d.document_id not in decided]
        rank: dict[str, int] = {}
        if fresh:
            asked, others = self._gate_inputs()
            vocabulary = self.store.catalog.vocabulary
            together = self.search.together_entity_ids or tuple(e.entity_id for e in asked)
            pairs = pair_documents(together, self.store.entity_document_ids)
            result = gate(
                fresh,
                asked,
                others,
                self.config.entity_gate,
                vocabulary,
                self.search.doc_type_hint,
                pair_documents=pairs,
                selected=self.selected,
            )
            self.gate_verdicts.extend(result.verdicts)
            rank = {d: i for i, d in enumerate(result.kept_ids)}
            decided.update(dict.fromkeys(result.kept_ids, True))
            decided.update({e.document_id: False for e in result.exclusions})
            self.gate_exclusions.extend(result.exclusions)
            self.relaxed.extend(result.relaxed)
        position = {d.document_id: i for i, d in reversed(list(enumerate(documents)))}
        kept = [d for d in position if decided[d]]
        return sorted(kept, key=lambda d: (rank.get(d, -1), position[d]))

    def _with_amendments(self, ids: Sequence[str]) -> list[str]:
        """`ids` with each agreement's amendments (and each amendment's agreement) right after it, those
        the scope allows and the gate keeps: an agreement is read with what amends it."""
        family = self._families()
        if not family:
            return list(ids)
        documents = self.store.catalog.documents
        related = [m for d in ids for m in family.get(d, ()) if m not in ids]
        related = [m for m in related if id_problem(m, self.known, self.allowed) is None]
        keep = set(self._gate([documents[m] for m in dict.fromkeys(related)])) if related else set()
        out: dict[str, None] = {}
        for d in ids:
            out[d] = None
            out.update(dict.fromkeys(m for m in family.get(d, ()) if m in keep))
        return list(out)

    def _families(self) -> dict[str, tuple[str, ...]]:
        """document id -> the other documents of its agreement (the agreement and its amendments), in
        catalog order; only documents that have any."""
        if self._family is None:
            documents = self.store.catalog.documents
            members: dict[str, list[str]] = {}
            for d in documents.values():
                if d.amends is not None and d.amends in documents:
                    members.setdefault(d.amends, [d.amends]).append(d.document_id)
            self._family = {m: tuple(x for x in group if x != m) for group in members.values() for m in group}
        return self._family

    def _owned(self, asked: Sequence[Entity], ids: Sequence[str]) -> frozenset[str]:
        """Those of `ids` whose owners the catalog declares and that an asked entity owns: whose they are
        is decided, so the chunk backstop does not judge their chunks."""
        wanted = {e.entity_id for e in asked}
        documents = self.store.catalog.documents
        return frozenset(d for d in ids if not documents[d].text_rules and wanted & set(documents[d].entity_ids))

    def _preferred(self, ids: Sequence[str]) -> tuple[frozenset[str], bool]:
        """(those of `ids` whose documents cover a period the question names, whether only those are
        read): none when it names none or sets its period against others ("compared to previous
        quarters": every period is needed); only those under "filter"."""
        if not self.search.periods or self.config.planner.period_preference == "off":
            return frozenset(), False
        documents = self.store.catalog.documents
        for d in ids:
            if d not in self._periods:
                self._periods[d] = document_periods(documents[d].attributes)
        held = {d: self._periods[d] for d in ids}
        owners = {d: (documents[d].entity_ids or ("",))[0] for d in ids}
        asked = asked_from_labels(self.search.periods)
        if asked.others:
            return frozenset(), False
        only = self.config.planner.period_preference == "filter"
        return preferred_documents(asked, held, owners), only

    def _by_period(self, ids: list[str]) -> list[str]:
        """`ids` with the documents of the asked periods first (only those, when "filter" allows)."""
        preferred, only = self._preferred(ids)
        if not preferred:
            return ids
        first = [d for d in ids if d in preferred]
        return first if only else [*first, *(d for d in ids if d not in preferred)]

    def retrieve_docs(self, args: Mapping[str, object]) -> ToolResult[Any]:
        """Documents for the query inside the scope, through the entity gate, best first."""
        query = args.get("query")
        if not isinstance(query, str):
            return ToolResult.failure("invalid_param", "query must be a string")
        search = self.search
        k = _int_arg(args, "k", search.documents_k or self.config.planner.max_docs)
        restrict: tuple[str, ...] | None = None
        if self.allowed is not None:
            checked = filter_document_ids(sorted(self.allowed), self.allowed, self.known)
            self.recorder.rejections.extend(checked.rejections)
            restrict = self.ensure_sendable(checked.accepted)
            if not restrict:
                self._record_sent(())
                return ToolResult.success(())
        self._record_sent(restrict)
        weights = dict(search.weights) if search.weights else None
        found = _store_call(
            lambda: self.store.search_documents(
                query, GATE_DEPTH * k, restrict, mode=search.mode, weights=weights, depths=search.depths
            )
        )
        if found.value is None:
            return found
        by_id = {h.document.document_id: h for h in found.value}
        ids = self._with_amendments(self._by_period(self._gate([h.document for h in found.value]))[:k])
        documents = self.store.catalog.documents
        kept = tuple(by_id.get(d) or DocumentHit(documents[d], 0.0) for d in ids)
        if not kept:
            self.empty_searches.add(query)
        return ToolResult.success(kept)

    def retrieve_chunks(self, args: Mapping[str, object]) -> ToolResult[Any]:
        """Chunks of the given documents: only canonical, known, in-scope ids the gate keeps."""
        query = args.get("query")
        raw = args.get("document_ids")
        if not isinstance(query, str):
            return ToolResult.failure("invalid_param", "query must be a string")
        if not isinstance(raw, list | tuple):
            return ToolResult.failure("invalid_param", "document_ids must be a list")
        checked = filter_document_ids(raw, self.allowed if self.allowed is not None else self.known, self.known)
        self.recorder.rejections.extend(checked.rejections)
        keep = set(self._gate([self.store.catalog.documents[d] for d in checked.accepted]))
        accepted = [d for d in checked.accepted if d in keep]
        if not accepted:
            reason = (
                f"no usable document ids ({len(checked.rejections)} rejected, "
                f"{len(checked.accepted)} excluded by the entity gate)"
            )
            return ToolResult.failure("missing_param", reason, ("document_ids",))
        preferred, only = self._preferred(accepted)
        if preferred and only:
            accepted = [d for d in accepted if d in preferred]
        ids = self.ensure_sendable(accepted)
        searched: list[str] = [query_within(self.store, query, ids)]
        self._record_sent(ids)
        search = self.search
        k = _int_arg(args, "k", self.config.chunks_k)
        weights = dict(search.weights) if search.weights else None

        def chunks(within: tuple[str, ...]) -> list[ChunkHit]:
            dense_query, depths = search.dense_query, search.depths
            return self.store.search_chunks(
                searched[-1],
                k,
                within,
                mode=search.mode,
                weights=weights,
                dense_query=dense_query,
                depths=depths,
                page_weight=self.config.page_weight,
                figure_weight=self.config.figure_weight if search.figures else 0.0,
            )

        found = _store_call(lambda: chunks(ids))
        if found.value == [] and searched[-1] != query:
            # Without the owner's names nothing matched (BM25 alone): the names are all it had to go on.
            searched.append(query)
            found = _store_call(lambda: chunks(ids))
        if found.value is None:
            return found
        hits: list[ChunkHit] = found.value
        if preferred and len(preferred) < len(ids):
            # "boost": the asked periods' ranking fused with the whole one, so their chunks come first.
            boosted = _store_call(lambda: chunks(tuple(d for d in ids if d in preferred)))
            if boosted.value is not None:
                hits = _fused(boosted.value, hits, k)
        asked, others = self._gate_inputs()
        backstop = chunk_backstop(hits, asked, others, self.store.catalog.vocabulary, self._owned(asked, ids))
        self.chunk_exclusions.extend(backstop.exclusions)
        return ToolResult.success(backstop.kept)


def _fused(first: Sequence[ChunkHit], second: Sequence[ChunkHit], k: int) -> list[ChunkHit]:
    """The top k of two chunk rankings by reciprocal rank fusion (ties by row)."""
    hits = {h.chunk.row: h for h in (*second, *first)}
    rankings = {"preferred": [h.chunk.row for h in first], "all": [h.chunk.row for h in second]}
    return [hits[f.row] for f in reciprocal_rank_fusion(rankings, limit=k)]


def context_sources(scope: QuestionScope) -> list[ContextSource]:
    """Where a retry may take document ids from: the chip, else the scope's entity (explicit or implicit)."""
    if scope.document_ids is None:
        return []
    name = "scope_documents" if scope.scope.kind == "chip" else "scope_entities" if scope.implicit else "scope_property"
    return [ContextSource(name, {"document_ids": list(scope.document_ids)})]


def query_within(store: SearchStore, query: str, ids: Collection[str]) -> str:
    """`query` without the names of the entities owning every one of documents `ids` that has owners:
    inside their documents those names are on every page (headers, footers) and would rank them, not
    the answer."""
    documents, entities = store.catalog.documents, store.catalog.entities
    owned = [set(documents[d].entity_ids) for d in ids if documents[d].entity_ids]  # a shared annex has none
    owners = set.intersection(*owned) if owned else set()
    owning = [entities[e] for e in sorted(owners) if e in entities]
    return without_mentions(query, owning, store.catalog.vocabulary) if owning else query
