"""Planner rules (seed 004, section 3): intake signals and scope -> PlannerState. Pure.

- a PII request the safety settings forbid -> defer_or_refuse
- a blocking ambiguity -> clarify_then_retrieve with 1-3 questions
- no retrieval needed -> direct_answer
- literal terms -> no HyDE, BM25-weighted, must_match_exactly, a precision round
- synthesis, a policy lookup or literal terms -> a gap-filling round after the first, run only
  while the acceptance criteria are unmet; otherwise one round
- the gate protects the entities `gate_entity_ids` names; acceptance asks that each owns a
  document among the chunks (and, for synthesis, that two documents are among them)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Protocol

from pipeline.guards.entity_gate import pair_documents
from pipeline.intake.analysis import Intake, analyse_question
from pipeline.intake.planner_state import (
    MAX_CLARIFYING_CHARS,
    MAX_GOAL_CHARS,
    AcceptanceCriteria,
    Budget,
    ClarifyingQuestion,
    LiteralConstraints,
    PlannerMeta,
    PlannerState,
    RationaleTag,
    RetrievalFilters,
    RetrievalMode,
    RetrievalRound,
    RoundOutput,
    RoundPurpose,
    Safety,
    StopConditions,
    Strategy,
)
from pipeline.intake.scope import (
    QuestionScope,
    Scope,
    ScopeCatalog,
    ScopeNote,
    gate_entity_ids,
    question_scope,
    scope_note,
)
from pipeline.settings import PlannerConfig
from pipeline.text import cut_text
from pipeline.types import Document, Entity
from pipeline.vocabulary import Vocabulary

MAX_QUESTIONS = 3

_SCOPE_TAG: dict[str, RationaleTag] = {
    "no_scope": "no_scope",
    "chip": "chip_scope",
    "property": "property_scope",
}
# Literal kinds the intake names itself; any other kind is one of the corpus's identifier patterns.
_LITERAL_TAG: dict[str, RationaleTag] = {
    "quoted": "quoted_text_present",
    "error_message": "error_message_present",
    "identifier": "identifier_present",
    "clause": "clause_reference_present",
}


def _names(ids: tuple[str, ...], entities: Mapping[str, Entity]) -> list[str]:
    return [entities[i].name for i in ids if i in entities]


def _or_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _asked(text: str, blocking: bool, cuts: list[str]) -> ClarifyingQuestion:
    """A clarifying question, cut to its length limit (long names make long questions) with the cut noted."""
    question, length = cut_text(text, MAX_CLARIFYING_CHARS)
    if length is not None:
        cuts.append(f"clarifying question of {length} characters cut to {MAX_CLARIFYING_CHARS}")
    return ClarifyingQuestion(question=question, blocking=blocking)


def clarifying_questions(
    intake: Intake, scope: Scope, entities: Mapping[str, Entity], cuts: list[str] | None = None
) -> tuple[tuple[ClarifyingQuestion, ...], tuple[RationaleTag, ...]]:
    """At most three questions, each tied to one concrete uncertainty, and their tags; a question over
    its length limit is cut and the cut appended to `cuts`."""
    cuts = [] if cuts is None else cuts
    questions: list[ClarifyingQuestion] = []
    tags: list[RationaleTag] = []
    for acronym, meanings in intake.ambiguous_acronyms:
        questions.append(_asked(f"By {acronym}, do you mean {_or_list(list(meanings))}?", True, cuts))
        tags.append("ambiguous_acronym")
    # A name several entities go by is asked about whenever no scope says which; a word they share only
    # when the question names no entity in full.
    if scope.kind == "no_scope":
        for phrase, owners in intake.ambiguous_names:
            question = f"Which one do you mean by '{phrase}': {_or_list(_names(owners, entities))}?"
            questions.append(_asked(question, True, cuts))
            tags.append("ambiguous_entity")
    if scope.kind == "no_scope" and not intake.entity_ids:
        for word, owners in intake.ambiguous_entities:
            question = f"Which one do you mean by '{word}': {_or_list(_names(owners, entities))}?"
            questions.append(_asked(question, True, cuts))
            tags.append("ambiguous_entity")
    if scope.entity_id is not None and intake.entity_ids and scope.entity_id not in intake.entity_ids:
        scoped = _names((scope.entity_id,), entities)
        asked = _names(intake.entity_ids, entities)
        if scoped and asked:
            question = (
                f"You asked about {_or_list(asked)}, but the selection is {scoped[0]}; "
                f"answers come only from {scoped[0]}'s documents. Switch to {asked[0]}?"
            )
            questions.append(_asked(question, False, cuts))
            tags.append("scope_conflict")
    return tuple(questions[:MAX_QUESTIONS]), tuple(dict.fromkeys(tags))


def _modes(intake: Intake, config: PlannerConfig) -> tuple[tuple[RetrievalMode, ...], bool]:
    """(retrievers with fusion weights, use_hyde): BM25-heavy for literals, vector-heavy for concepts."""
    favoured, other = config.favoured_weight, round(1.0 - config.favoured_weight, 6)
    if intake.literal_terms or intake.troubleshooting:
        bm25, vector, hyde = favoured, other, False
    elif intake.conceptual:
        bm25, vector, hyde = other, favoured, True
    else:
        bm25, vector, hyde = round(1.0 - config.dense_weight, 6), config.dense_weight, False
    return (
        RetrievalMode(type="bm25", k=config.bm25_k, alpha=bm25),
        RetrievalMode(type="vector", k=config.vector_k, alpha=vector),
    ), hyde


def _purposes(intake: Intake) -> list[RoundPurpose]:
    """A first round, then one gap-filling round where a gap is likely and worth a search:
    several things to cover (synthesis), a rule to find (policy), exact terms to find."""
    first: RoundPurpose = "precision" if intake.literal_terms else "recall"
    follow_up = intake.requires_synthesis or intake.policy_lookup or bool(intake.literal_terms)
    return [first, "gap_filling"] if follow_up else [first]


def _variants(purpose: RoundPurpose, intake: Intake) -> tuple[str, ...]:
    """The question (each sub-question stands in for it), then its literal terms for precision."""
    out = [intake.question]
    if purpose == "precision" and intake.literal_terms:
        out.append(" ".join(intake.literal_texts))
    return tuple(dict.fromkeys(out))[:5]


def _rounds(intake: Intake, gate_ids: tuple[str, ...], config: PlannerConfig) -> tuple[RetrievalRound, ...]:
    modes, hyde = _modes(intake, config)
    together = intake.entity_ids if len(intake.entity_ids) > 1 else ()
    filters = RetrievalFilters(
        doc_types=tuple(sorted(intake.doc_type_hint)),
        entities=gate_ids,
        together=together,
        periods=intake.periods.labels[:8],
    )
    return tuple(
        RetrievalRound(
            round_id=i,
            purpose=purpose,
            query_variants=_variants(purpose, intake),
            retrieval_modes=modes,
            filters=filters,
            # A passage about the whole question helps the first, broad search; gap-filling
            # queries name what is missing and must not be blurred by it.
            use_hyde=hyde and i == 1,
            output=RoundOutput(max_docs=config.max_docs),
        )
        for i, purpose in enumerate(_purposes(intake), start=1)
    )


def _tags(intake: Intake, scope: Scope) -> list[RationaleTag]:
    tags: list[RationaleTag] = [_SCOPE_TAG[scope.kind]]
    if intake.literal_terms:
        tags.append("literal_term_present")
        tags.extend(_LITERAL_TAG.get(t.kind, "corpus_identifier_present") for t in intake.literal_terms)
    flags: list[tuple[bool, RationaleTag]] = [
        (intake.requires_synthesis, "requires_synthesis"),
        (len(intake.entity_ids) > 1, "multi_entity"),
        (intake.conceptual, "conceptual_question"),
        (intake.policy_lookup, "policy_lookup"),
        (intake.troubleshooting, "troubleshooting"),
        (bool(intake.entity_ids), "entity_mentioned"),
        (scope.entity_id is not None, "entity_in_scope"),
        (bool(intake.doc_type_hint), "doc_type_hint"),
        (bool(intake.periods), "period_mentioned"),
    ]
    tags.extend(tag for on, tag in flags if on)
    return tags


def plan_question(
    intake: Intake, scope: Scope, entities: Mapping[str, Entity], config: PlannerConfig | None = None
) -> PlannerState:
    """The PlannerState the rules give for this intake and scope; no LM, no I/O."""
    config = config or PlannerConfig()
    tags = _tags(intake, scope)
    cuts: list[str] = []
    questions, question_tags = clarifying_questions(intake, scope, entities, cuts)
    goal, length = cut_text(intake.question, MAX_GOAL_CHARS)
    if length is not None:
        cuts.append(f"question of {length} characters cut to {MAX_GOAL_CHARS}")
        kept = tuple(t for t in intake.literal_terms if t.text in goal)  # terms past the cut are not searched
        intake = dataclasses.replace(intake, question=goal, literal_terms=kept)
    tags.extend(question_tags)
    gate_ids = tuple(e for e in gate_entity_ids(scope, intake.entity_ids) if e in entities)
    strategy: Strategy
    rounds: tuple[RetrievalRound, ...] = ()
    if intake.pii_request and not config.pii_allowed:
        strategy, questions = "defer_or_refuse", ()
        tags.append("pii_request")
    elif any(q.blocking for q in questions):
        strategy = "clarify_then_retrieve"
    elif intake.retrieval_intent == "none":
        strategy = "direct_answer"
        tags.append("reasoning_only" if intake.answerability == "reasoning_only" else "no_retrieval_needed")
    else:
        strategy, rounds = "retrieve_then_answer", _rounds(intake, gate_ids, config)
    synthesis = intake.requires_synthesis and bool(rounds)
    literal = bool(intake.literal_terms) and bool(rounds)
    return PlannerState(
        goal=goal,
        strategy=strategy,
        clarifying_questions=questions,
        retrieval_rounds=rounds,
        literal_constraints=LiteralConstraints(
            must_preserve_terms=intake.literal_texts if literal else (), must_match_exactly=literal
        ),
        acceptance_criteria=AcceptanceCriteria(
            # Entities are covered one by one (must_cover_entities); a comparison also wants two sources.
            min_independent_sources=(2 if synthesis else 1) if rounds else 0,
            must_cover_entities=gate_ids if rounds else (),
            must_answer_subquestions=intake.subquestions if rounds else (),
        ),
        stop_conditions=StopConditions(
            max_rounds=config.max_rounds if rounds else 0,
            max_total_docs=config.max_total_docs if rounds else 0,
            no_new_information_rounds=1,
        ),
        budget=Budget(max_tokens=config.max_tokens, max_latency_ms=config.max_latency_ms),
        safety=Safety(pii_allowed=config.pii_allowed),
        planner_meta=PlannerMeta(
            planner_version=config.planner_version, rationale_tags=tuple(dict.fromkeys(tags)), cuts=tuple(cuts)
        ),
    )


def analyse_and_plan(
    question: str,
    scope: Scope,
    entities: Mapping[str, Entity],
    doc_types: Collection[str],
    config: PlannerConfig | None = None,
    *,
    vocabulary: Vocabulary,
    context: str = "",
) -> tuple[Intake, PlannerState]:
    """The question's intake signals and the plan they give, for the catalog's entities, document types
    and vocabulary."""
    config = config or PlannerConfig()
    intake = analyse_question(question, list(entities.values()), doc_types, config, vocabulary, context)
    return intake, plan_question(intake, scope, entities, config)


class PlanningCatalog(Protocol):
    """What planning a question in its scope needs from the catalog (Store satisfies it)."""

    @property
    def entities(self) -> Mapping[str, Entity]: ...

    @property
    def vocabulary(self) -> Vocabulary: ...

    @property
    def documents(self) -> Mapping[str, Document]: ...

    @property
    def entity_kind(self) -> str: ...


class PlanningStore(ScopeCatalog, Protocol):
    @property
    def catalog(self) -> PlanningCatalog: ...


def plan_in_scope(
    question: str,
    scope: Scope,
    store: PlanningStore,
    doc_types: Collection[str],
    config: PlannerConfig | None = None,
    context: str = "",
) -> tuple[Intake, PlannerState, QuestionScope]:
    """The question's intake, its plan, and the documents it may read, derived once here: a question
    with no scope that names entities (or whose `context`, a long prompt's preamble, names them) reads only
    their documents (an implicit entity scope)."""
    catalog = store.catalog
    intake, plan = analyse_and_plan(
        question, scope, catalog.entities, doc_types, config, vocabulary=catalog.vocabulary, context=context
    )
    named = tuple(e for e in intake.entity_ids if e in catalog.entities) if plan.retrieval_rounds else ()
    return intake, plan, question_scope(scope, store, named)


def plan_scope_note(plan: PlannerState, scope: QuestionScope, store: PlanningStore) -> ScopeNote | None:
    """What the answer must say about whose documents the scope selected, for the entities the plan's
    gate protects (none for an implicit entity scope: those are the named entities' own)."""
    if scope.implicit or not plan.retrieval_rounds:
        return None
    filters = plan.retrieval_rounds[0].filters
    together = pair_documents(filters.together or filters.entities, store.entity_document_ids)
    catalog = store.catalog
    return scope_note(
        scope.document_ids, filters.entities, catalog.documents, catalog.entities, catalog.entity_kind, together
    )
