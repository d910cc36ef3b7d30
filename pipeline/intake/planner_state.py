"""PlannerState (seed 004): how to search, when to stop, what counts as success. Structured
only: apart from the goal and the clarifying questions there is no prose, only values and
tags, so plans can be compared, tested and labelled."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pipeline.settings import Sensitivity
from pipeline.types import Strict

Strategy = Literal["direct_answer", "retrieve_then_answer", "clarify_then_retrieve", "defer_or_refuse"]
ClarificationReason = Literal[
    "ambiguous_entity", "ambiguous_acronym", "scope_conflict", "missing_entity", "underspecified_request"
]
RoundPurpose = Literal["recall", "precision", "verification", "gap_filling"]
RetrieverType = Literal["bm25", "vector"]
AnswerFormat = Literal["sections", "bullet_points", "citations", "table", "short_answer"]
AnswerLength = Literal["short", "medium", "long"]
CitationStyle = Literal["filename_page"]
Tone = Literal["neutral", "formal"]
RationaleTag = Literal[
    "no_retrieval_needed",
    "reasoning_only",
    "literal_term_present",
    "error_message_present",
    "identifier_present",
    "quoted_text_present",
    "clause_reference_present",
    "parcel_number_present",
    "ambiguous_acronym",
    "ambiguous_entity",
    "scope_conflict",
    "requires_synthesis",
    "multi_entity",
    "conceptual_question",
    "policy_lookup",
    "troubleshooting",
    "pii_request",
    "entity_in_scope",
    "entity_mentioned",
    "doc_type_hint",
    "no_scope",
    "chip_scope",
    "property_scope",
]


class ClarifyingQuestion(Strict):
    """A question that unblocks one concrete planning uncertainty."""

    question: str = Field(min_length=1, max_length=300)
    reason: ClarificationReason
    blocking: bool


class RetrievalMode(Strict):
    """One retriever of a round: its depth and its weight in fusion."""

    type: RetrieverType
    k: int = Field(ge=1, le=200)
    alpha: float | None = Field(default=None, ge=0.0, le=1.0)


class RetrievalFilters(Strict):
    doc_types: tuple[str, ...] | None = None
    domains: tuple[str, ...] | None = None
    entities: tuple[str, ...] | None = None
    time_range: str | None = Field(default=None, max_length=60)


class Rerank(Strict):
    enabled: bool = False
    model: Literal["cross_encoder"] = "cross_encoder"
    rerank_top_k: int = Field(default=8, ge=1, le=100)


class RoundOutput(Strict):
    max_docs: int = Field(ge=1, le=100)


class RetrievalRound(Strict):
    """One explicit, small search with a purpose."""

    round_id: int = Field(ge=1, le=3)
    purpose: RoundPurpose
    query_variants: tuple[str, ...] = Field(min_length=1, max_length=5)
    retrieval_modes: tuple[RetrievalMode, ...] = Field(min_length=1, max_length=2)
    filters: RetrievalFilters = RetrievalFilters()
    use_hyde: bool = False
    rrf: bool = True
    rerank: Rerank = Rerank()
    output: RoundOutput

    @model_validator(mode="after")
    def _distinct_modes(self) -> RetrievalRound:
        types = [m.type for m in self.retrieval_modes]
        if len(set(types)) != len(types):
            raise ValueError(f"retrieval mode listed twice: {types}")
        if len(types) > 1 and not self.rrf:
            raise ValueError("two retrieval modes need rrf to be fused")
        return self


class LiteralConstraints(Strict):
    """Exact strings the search must keep (ids, error text, quoted names, clause numbers)."""

    must_preserve_terms: tuple[str, ...] = ()
    must_match_exactly: bool = False


class AcceptanceCriteria(Strict):
    min_independent_sources: int = Field(default=1, ge=0, le=20)
    require_authoritative_source: bool = False
    must_cover_entities: tuple[str, ...] = ()
    must_answer_subquestions: tuple[str, ...] | None = None


class StopConditions(Strict):
    max_rounds: int = Field(ge=0, le=3)
    max_total_docs: int = Field(ge=0, le=500)
    confidence_threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    no_new_information_rounds: int = Field(default=1, ge=1, le=3)


class AnswerRequirements(Strict):
    format: tuple[AnswerFormat, ...] = ("sections", "bullet_points", "citations")
    tone: Tone | None = "neutral"
    length: AnswerLength | None = "medium"
    citation_style: CitationStyle | None = "filename_page"


class Budget(Strict):
    max_tokens: int = Field(ge=1)
    max_latency_ms: int | None = Field(default=None, ge=1)


class Safety(Strict):
    sensitivity: Sensitivity
    pii_allowed: bool


class PlannerMeta(Strict):
    planner_version: str = Field(min_length=1, max_length=60)
    rationale_tags: tuple[RationaleTag, ...] = ()


class PlannerState(Strict):
    """The planner's whole output; the executor's input. One controlling strategy."""

    goal: str = Field(min_length=1, max_length=2000)
    strategy: Strategy
    clarifying_questions: tuple[ClarifyingQuestion, ...] = Field(default=(), max_length=3)
    retrieval_rounds: tuple[RetrievalRound, ...] = Field(default=(), max_length=3)
    literal_constraints: LiteralConstraints = LiteralConstraints()
    acceptance_criteria: AcceptanceCriteria = AcceptanceCriteria()
    stop_conditions: StopConditions
    answer_requirements: AnswerRequirements = AnswerRequirements()
    budget: Budget
    safety: Safety
    planner_meta: PlannerMeta

    @model_validator(mode="after")
    def _consistent(self) -> PlannerState:
        rounds = self.retrieval_rounds
        if [r.round_id for r in rounds] != list(range(1, len(rounds) + 1)):
            raise ValueError("round ids must be 1, 2, 3 in order")
        if self.strategy == "retrieve_then_answer" and not rounds:
            raise ValueError("retrieve_then_answer needs at least one retrieval round")
        if self.strategy in ("direct_answer", "defer_or_refuse", "clarify_then_retrieve") and rounds:
            raise ValueError(f"{self.strategy} runs no retrieval round now")
        if self.strategy == "clarify_then_retrieve" and not any(q.blocking for q in self.clarifying_questions):
            raise ValueError("clarify_then_retrieve needs a blocking clarifying question")
        if self.strategy != "clarify_then_retrieve" and any(q.blocking for q in self.clarifying_questions):
            raise ValueError("a blocking question means clarify_then_retrieve")
        if self.stop_conditions.max_rounds < len(rounds):
            raise ValueError("stop_conditions.max_rounds is below the number of rounds")
        if self.literal_constraints.must_match_exactly and any(r.use_hyde for r in rounds):
            raise ValueError("HyDE would paraphrase terms that must match exactly")
        for term in self.literal_constraints.must_preserve_terms:
            if not all(any(term in q for q in r.query_variants) for r in rounds):
                raise ValueError(f"literal term {term!r} missing from a round's query variants")
        return self
