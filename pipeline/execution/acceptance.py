"""What counts as enough (seed 004's acceptance criteria and literal constraints), checked in code:
merging the rankings of a sub-question's queries, literal terms first; whether the merged chunks
meet the plan's criteria; and which of the question's own sub-questions the decomposition missed."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from pipeline.entities import contains_term
from pipeline.intake.planner_state import AcceptanceCriteria, LiteralConstraints
from pipeline.retrieval.fusion import RRF_K, reciprocal_rank_fusion
from pipeline.text import bm25_tokens
from pipeline.types import ChunkHit, Document, Entity

# An explicit sub-question counts as asked when a decomposed one holds this share of its words.
SUB_QUESTION_OVERLAP = 0.5


@dataclass(frozen=True)
class Acceptance:
    """The acceptance verdict on a sub-question's chunks after a round."""

    met: bool
    sources: int
    sources_needed: int
    uncovered_entities: tuple[str, ...]
    missing_terms: tuple[str, ...]

    @property
    def sources_short(self) -> bool:
        return self.sources < self.sources_needed


def literal_count(text: str, terms: Sequence[str]) -> int:
    """How many of `terms` occur in `text` (see contains_term)."""
    return sum(1 for term in terms if contains_term(text, term))


def merge_chunks(lists: Sequence[Sequence[ChunkHit]], terms: Sequence[str], k: int) -> tuple[ChunkHit, ...]:
    """The top k of several rankings fused by reciprocal rank (ties by chunk row); chunks holding
    more of the literal `terms` rank first. Each hit's score is what ordered it (literal terms
    found + fused score), so sorting by score reproduces the order; the store's score is kept
    in `scores["retrieved"]`."""
    first: dict[int, ChunkHit] = {}
    for ranking in lists:
        for hit in ranking:
            first.setdefault(hit.chunk.row, hit)
    fused = reciprocal_rank_fusion({str(i): [h.chunk.row for h in ranking] for i, ranking in enumerate(lists)})
    counts = {f.row: literal_count(first[f.row].chunk.text, terms) if terms else 0 for f in fused}
    ordered = sorted(fused, key=lambda f: -counts[f.row])  # stable: fused order within a count
    # A fused score is at most len(lists) / (RRF_K + 1); scaled below 1, a literal term outranks it.
    scale = (RRF_K + 1) / (len(lists) + 1)
    out = []
    for f in ordered[:k]:
        hit = first[f.row]
        scores = {**hit.scores, "retrieved": hit.score, "merged": f.score, "literal_terms": float(counts[f.row])}
        out.append(dataclasses.replace(hit, score=counts[f.row] + f.score * scale, scores=scores))
    return tuple(out)


def check_acceptance(
    chunks: Sequence[ChunkHit],
    criteria: AcceptanceCriteria,
    literal: LiteralConstraints,
    documents: Mapping[str, Document],
) -> Acceptance:
    """Distinct documents among `chunks` against min_independent_sources; each must-cover entity
    owning one of them; each must-preserve term found in one chunk when it must match exactly."""
    docs = dict.fromkeys(h.chunk.document_id for h in chunks)
    owners = {e for d in docs if d in documents for e in documents[d].entity_ids}
    uncovered = tuple(e for e in criteria.must_cover_entities if e not in owners)
    missing: tuple[str, ...] = ()
    if literal.must_match_exactly:
        missing = tuple(
            t for t in literal.must_preserve_terms if not any(contains_term(h.chunk.text, t) for h in chunks)
        )
    met = len(docs) >= criteria.min_independent_sources and not uncovered and not missing
    return Acceptance(met, len(docs), criteria.min_independent_sources, uncovered, missing)


def name_terms(entities: Iterable[Entity]) -> frozenset[str]:
    """The index terms of every entity's names: they tell apart entities, not what is asked about them."""
    return frozenset(t for e in entities for name in e.names for t in bm25_tokens(name))


def missing_sub_questions(
    decomposed: Sequence[str], required: Sequence[str], ignore: Collection[str] = frozenset()
) -> tuple[str, ...]:
    """The required sub-questions no decomposed one covers: covered means a decomposed
    sub-question holds at least half of its index terms (stemmed, stopwords and `ignore` left out:
    "Who is the tenant?" covers "Who is the tenant of Alpha House?")."""

    def words(text: str) -> set[str]:
        return set(bm25_tokens(text)) - set(ignore)

    have = [words(d) for d in decomposed]
    out = []
    for wanted in required:
        terms = words(wanted)
        if terms and not any(len(terms & h) / len(terms) >= SUB_QUESTION_OVERLAP for h in have):
            out.append(wanted)
    return tuple(out)
