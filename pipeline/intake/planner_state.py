"""PlannerState (seed 004): how to search, when to stop, what counts as success. Structured
only: apart from the goal and the clarifying questions there is no prose, only values and
tags, so plans can be compared, tested and labelled. Every field is executed: see
`pipeline.execution.rounds` (rounds, literal constraints, acceptance, stop conditions),
`pipeline.execution.direct` (direct answers) and `pipeline.program.module` (goal, strategy,
clarifying questions, HyDE, budget, planner_meta in the trace)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pipeline.types import Strict

Strategy = Literal["direct_answer", "retrieve_then_answer", "clarify_then_retrieve", "defer_or_refuse"]
# recall: the sub-question as asked; precision: plus its literal terms, which rank first;
# gap_filling: runs only while acceptance is unmet, with queries aimed at what is missing.
RoundPurpose = Literal["recall", "precision", "gap_filling"]
RetrieverType = Literal["bm25", "vector"]
RationaleTag = Literal[
    "no_retrieval_needed",
    "reasoning_only",
    "literal_term_present",
    "error_message_present",
    "identifier_present",
    "quoted_text_present",
    "clause_reference_present",
    "corpus_identifier_present",
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
    "period_mentioned",
    "no_scope",
    "chip_scope",
    "property_scope",
]


# Longest clarifying question and goal: text built from names and questions is cut to these, never refused.
MAX_CLARIFYING_CHARS = 300
MAX_GOAL_CHARS = 2000


class ClarifyingQuestion(Strict):
    """A question that unblocks one concrete planning uncertainty (its kind is a rationale tag).

    A blocking question is asked instead of an answer; any other comes with the answer."""

    question: str = Field(min_length=1, max_length=MAX_CLARIFYING_CHARS)
    blocking: bool


class RetrievalMode(Strict):
    """One retriever of a round: how deep it looks before fusion, and its weight in fusion."""

    type: RetrieverType
    k: int = Field(ge=1, le=200)
    alpha: float | None = Field(default=None, ge=0.0, le=1.0)


class RetrievalFilters(Strict):
    """Document types the entity gate ranks first, the entity ids it protects, and the periods whose
    documents retrieval prefers ("2023-Q2", "2022", "2021-12-31", "latest"; pipeline.values.periods)."""

    doc_types: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    # Entities the question names together (two or more): a document one of them owns with an entity
    # outside them is another pair's, when they own a document together.
    together: tuple[str, ...] = ()
    periods: tuple[str, ...] = Field(default=(), max_length=8)


class RoundOutput(Strict):
    max_docs: int = Field(ge=1, le=100)


class RetrievalRound(Strict):
    """One explicit, small search with a purpose.

    A query variant equal to the plan's goal stands for "the sub-question being retrieved";
    in a gap_filling round it stands for the queries aimed at what acceptance still misses.
    """

    round_id: int = Field(ge=1, le=3)
    purpose: RoundPurpose
    query_variants: tuple[str, ...] = Field(min_length=1, max_length=5)
    retrieval_modes: tuple[RetrievalMode, ...] = Field(min_length=1, max_length=2)
    filters: RetrievalFilters = RetrievalFilters()
    use_hyde: bool = False
    output: RoundOutput

    @model_validator(mode="after")
    def _distinct_modes(self) -> RetrievalRound:
        types = [m.type for m in self.retrieval_modes]
        if len(set(types)) != len(types):
            raise ValueError(f"retrieval mode listed twice: {types}")
        return self


class LiteralConstraints(Strict):
    """Exact strings the search must keep (ids, error text, quoted names, clause numbers)."""

    must_preserve_terms: tuple[str, ...] = ()
    must_match_exactly: bool = False


class AcceptanceCriteria(Strict):
    """When a sub-question's retrieval counts as enough; checked after every round."""

    min_independent_sources: int = Field(default=1, ge=0, le=20)
    # Entity ids that must each own a document among the chunks.
    must_cover_entities: tuple[str, ...] = ()
    # The question's own sub-questions: each gets a section even if the decomposition missed it.
    must_answer_subquestions: tuple[str, ...] = ()


class StopConditions(Strict):
    max_rounds: int = Field(ge=0, le=3)
    max_total_docs: int = Field(ge=0, le=500)
    no_new_information_rounds: int = Field(default=1, ge=1, le=3)


class Budget(Strict):
    # LM output tokens over the whole question.
    max_tokens: int = Field(ge=1)
    # No follow-up retrieval round starts later than this after the question arrived.
    max_latency_ms: int | None = Field(default=None, ge=1)


class Safety(Strict):
    pii_allowed: bool


class PlannerMeta(Strict):
    planner_version: str = Field(min_length=1, max_length=60)
    rationale_tags: tuple[RationaleTag, ...] = ()
    # Text the planner cut to a length limit (a clarifying question naming long names, a long goal).
    cuts: tuple[str, ...] = ()


class PlannerState(Strict):
    """The planner's whole output; the executor's input. One controlling strategy."""

    goal: str = Field(min_length=1, max_length=MAX_GOAL_CHARS)
    strategy: Strategy
    clarifying_questions: tuple[ClarifyingQuestion, ...] = Field(default=(), max_length=3)
    retrieval_rounds: tuple[RetrievalRound, ...] = Field(default=(), max_length=3)
    literal_constraints: LiteralConstraints = LiteralConstraints()
    acceptance_criteria: AcceptanceCriteria = AcceptanceCriteria()
    stop_conditions: StopConditions
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
        if rounds and rounds[0].purpose == "gap_filling":
            raise ValueError("the first round cannot be gap_filling: no gap is known before a search")
        if self.strategy == "clarify_then_retrieve" and not any(q.blocking for q in self.clarifying_questions):
            raise ValueError("clarify_then_retrieve needs a blocking clarifying question")
        if self.strategy != "clarify_then_retrieve" and any(q.blocking for q in self.clarifying_questions):
            raise ValueError("a blocking question means clarify_then_retrieve")
        if rounds and self.stop_conditions.max_rounds < 1:
            raise ValueError("stop_conditions.max_rounds must be at least 1 to run a retrieval round")
        if self.literal_constraints.must_match_exactly and any(r.use_hyde for r in rounds):
            raise ValueError("HyDE would paraphrase terms that must match exactly")
        for term in self.literal_constraints.must_preserve_terms:
            if not all(any(term in q for q in r.query_variants) for r in rounds):
                raise ValueError(f"literal term {term!r} missing from a round's query variants")
        return self
