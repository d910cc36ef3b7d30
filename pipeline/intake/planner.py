"""Planner rules (seed 004, section 3): intake signals and scope -> PlannerState. Pure.

- a PII request the safety settings forbid -> defer_or_refuse
- a blocking ambiguity -> clarify_then_retrieve with 1-3 questions
- no retrieval needed -> direct_answer
- literal terms -> no HyDE, BM25-weighted, must_match_exactly
- synthesis -> 2-3 rounds with explicit acceptance criteria; otherwise 1-2 rounds
"""

from __future__ import annotations

from collections.abc import Mapping

from pipeline.intake.analysis import Intake
from pipeline.intake.planner_state import (
    AcceptanceCriteria,
    AnswerLength,
    AnswerRequirements,
    Budget,
    ClarifyingQuestion,
    LiteralConstraints,
    PlannerMeta,
    PlannerState,
    RationaleTag,
    Rerank,
    RetrievalFilters,
    RetrievalMode,
    RetrievalRound,
    RoundOutput,
    RoundPurpose,
    Safety,
    StopConditions,
    Strategy,
)
from pipeline.intake.scope import Scope
from pipeline.settings import PlannerConfig
from pipeline.types import Entity

MAX_QUESTIONS = 3

_SCOPE_TAG: dict[str, RationaleTag] = {
    "no_scope": "no_scope",
    "chip": "chip_scope",
    "property": "property_scope",
}
_LITERAL_TAG: dict[str, RationaleTag] = {
    "quoted": "quoted_text_present",
    "error_message": "error_message_present",
    "identifier": "identifier_present",
    "clause": "clause_reference_present",
    "parcel_number": "parcel_number_present",
}


def _names(ids: tuple[str, ...], entities: Mapping[str, Entity]) -> list[str]:
    return [entities[i].name for i in ids if i in entities]


def _or_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def clarifying_questions(
    intake: Intake, scope: Scope, entities: Mapping[str, Entity]
) -> tuple[tuple[ClarifyingQuestion, ...], tuple[RationaleTag, ...]]:
    """At most three questions, each tied to one concrete uncertainty, and their tags."""
    questions: list[ClarifyingQuestion] = []
    tags: list[RationaleTag] = []
    for acronym, meanings in intake.ambiguous_acronyms:
        questions.append(
            ClarifyingQuestion(
                question=f"By {acronym}, do you mean {_or_list(list(meanings))}?",
                reason="ambiguous_acronym",
                blocking=True,
            )
        )
        tags.append("ambiguous_acronym")
    # Only an unscoped question that names no entity in full is blocked by a shared word.
    if scope.kind == "no_scope" and not intake.entity_ids:
        for word, owners in intake.ambiguous_entities:
            names = _names(owners, entities)
            questions.append(
                ClarifyingQuestion(
                    question=f"Which one do you mean by '{word}': {_or_list(names)}?",
                    reason="ambiguous_entity",
                    blocking=True,
                )
            )
            tags.append("ambiguous_entity")
    if scope.entity_id is not None and intake.entity_ids and scope.entity_id not in intake.entity_ids:
        scoped = _names((scope.entity_id,), entities)
        asked = _names(intake.entity_ids, entities)
        if scoped and asked:
            questions.append(
                ClarifyingQuestion(
                    question=f"You asked about {_or_list(asked)}, but the selection is {scoped[0]}; "
                    f"answers come only from {scoped[0]}'s documents. Switch to {asked[0]}?",
                    reason="scope_conflict",
                    blocking=False,
                )
            )
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
        bm25, vector, hyde = 0.5, 0.5, False
    return (
        RetrievalMode(type="bm25", k=config.bm25_k, alpha=bm25),
        RetrievalMode(type="vector", k=config.vector_k, alpha=vector),
    ), hyde


def _purposes(intake: Intake) -> list[RoundPurpose]:
    if intake.requires_synthesis:
        extra: list[RoundPurpose] = ["verification"] if intake.policy_lookup or len(intake.entity_ids) > 1 else []
        return ["recall", "gap_filling", *extra]
    first: RoundPurpose = "precision" if intake.literal_terms else "recall"
    return [first, "verification"] if intake.policy_lookup else [first]


def _variants(purpose: RoundPurpose, intake: Intake, entity_names: list[str]) -> tuple[str, ...]:
    """The question first (it holds every literal term verbatim), then narrower variants."""
    out = [intake.question]
    if purpose == "precision" and intake.literal_terms:
        out.append(" ".join(intake.literal_texts))
    if purpose == "gap_filling":
        out.extend(intake.subquestions or tuple(f"{intake.question} {n}" for n in entity_names))
    return tuple(dict.fromkeys(out))[:5]


def _rounds(intake: Intake, entity_names: list[str], config: PlannerConfig) -> tuple[RetrievalRound, ...]:
    modes, hyde = _modes(intake, config)
    filters = RetrievalFilters(
        doc_types=tuple(sorted(intake.doc_type_hint)) or None, entities=tuple(entity_names) or None
    )
    return tuple(
        RetrievalRound(
            round_id=i,
            purpose=purpose,
            query_variants=_variants(purpose, intake, entity_names),
            retrieval_modes=modes,
            filters=filters,
            use_hyde=hyde and purpose in ("recall", "gap_filling"),
            rrf=True,
            rerank=Rerank(enabled=purpose in ("verification", "gap_filling"), rerank_top_k=config.rerank_top_k),
            output=RoundOutput(max_docs=config.max_docs),
        )
        for i, purpose in enumerate(_purposes(intake), start=1)
    )


def _tags(intake: Intake, scope: Scope) -> list[RationaleTag]:
    tags: list[RationaleTag] = [_SCOPE_TAG[scope.kind]]
    if intake.literal_terms:
        tags.append("literal_term_present")
        tags.extend(_LITERAL_TAG[t.kind] for t in intake.literal_terms)
    flags: list[tuple[bool, RationaleTag]] = [
        (intake.requires_synthesis, "requires_synthesis"),
        (len(intake.entity_ids) > 1, "multi_entity"),
        (intake.conceptual, "conceptual_question"),
        (intake.policy_lookup, "policy_lookup"),
        (intake.troubleshooting, "troubleshooting"),
        (bool(intake.entity_ids), "entity_mentioned"),
        (scope.entity_id is not None, "entity_in_scope"),
        (bool(intake.doc_type_hint), "doc_type_hint"),
    ]
    tags.extend(tag for on, tag in flags if on)
    return tags


def plan_question(
    intake: Intake, scope: Scope, entities: Mapping[str, Entity], config: PlannerConfig | None = None
) -> PlannerState:
    """The PlannerState the rules give for this intake and scope; no LM, no I/O."""
    config = config or PlannerConfig()
    tags = _tags(intake, scope)
    questions, question_tags = clarifying_questions(intake, scope, entities)
    tags.extend(question_tags)
    gate_ids = (scope.entity_id,) if scope.entity_id else intake.entity_ids
    entity_names = _names(gate_ids, entities)
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
        strategy, rounds = "retrieve_then_answer", _rounds(intake, entity_names, config)
    synthesis = intake.requires_synthesis and bool(rounds)
    length: AnswerLength = "long" if synthesis else "short" if intake.literal_terms else "medium"
    literal = bool(intake.literal_terms) and bool(rounds)
    return PlannerState(
        goal=intake.question,
        strategy=strategy,
        clarifying_questions=questions,
        retrieval_rounds=rounds,
        literal_constraints=LiteralConstraints(
            must_preserve_terms=intake.literal_texts if literal else (), must_match_exactly=literal
        ),
        acceptance_criteria=AcceptanceCriteria(
            min_independent_sources=(max(2, len(entity_names)) if synthesis else 1) if rounds else 0,
            require_authoritative_source=intake.policy_lookup and bool(rounds),
            must_cover_entities=tuple(entity_names) if rounds else (),
            must_answer_subquestions=(intake.subquestions or None) if synthesis else None,
        ),
        stop_conditions=StopConditions(
            max_rounds=len(rounds),
            max_total_docs=config.max_total_docs if rounds else 0,
            no_new_information_rounds=1,
        ),
        answer_requirements=AnswerRequirements(length=length),
        budget=Budget(max_tokens=config.max_tokens, max_latency_ms=config.max_latency_ms),
        safety=Safety(sensitivity=config.sensitivity, pii_allowed=config.pii_allowed),
        planner_meta=PlannerMeta(planner_version=config.planner_version, rationale_tags=tuple(dict.fromkeys(tags))),
    )


def round_weights(round_: RetrievalRound) -> dict[str, float]:
    """Fusion weights for the store ("bm25", "dense") from a round's retrieval modes."""
    names = {"bm25": "bm25", "vector": "dense"}
    return {names[m.type]: (m.alpha if m.alpha is not None else 1.0) for m in round_.retrieval_modes}
