"""Planner rules (seed 004): the behaviour tests of section 4 and one test per rule, plus the
PlannerState contract (structured only, consistent)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipeline.execution.rounds import round_search
from pipeline.intake.analysis import Intake, analyse_question
from pipeline.intake.planner import plan_question
from pipeline.intake.planner_state import PlannerState, RetrievalRound
from pipeline.intake.scope import NO_SCOPE, Scope
from pipeline.settings import PlannerConfig
from pipeline.types import Entity
from tests.support.vocabulary import DEMO_VOCABULARY

ENTITIES = {
    e.entity_id: e
    for e in (
        Entity("e-bl", "banda-lane", "Banda Lane", ("14 Banda Lane",)),
        Entity("e-br", "banda-road", "Banda Road", ("7 Banda Road",)),
        Entity("e-mg", "mellifera-gardens", "Mellifera Gardens", ()),
        Entity("e-mc", "mellifera-court", "Mellifera Court", ()),
    )
}
DOC_TYPES = {"lease", "valuation", "offer_letter", "policy"}
CONFIG = PlannerConfig(acronym_glossary={"LR": ("land reference", "lease renewal"), "SLA": ("service level", "sale")})
PROPERTY = Scope(kind="property", entity_id="e-bl")


def intake(question: str, config: PlannerConfig = CONFIG) -> Intake:
    return analyse_question(question, list(ENTITIES.values()), DOC_TYPES, config, DEMO_VOCABULARY)


def plan(question: str, scope: Scope = NO_SCOPE, config: PlannerConfig = CONFIG) -> PlannerState:
    return plan_question(intake(question, config), scope, ENTITIES, config)


def weights(state: PlannerState) -> dict[str, float]:
    return dict(round_search(state.retrieval_rounds[0]).weights or {})


# -- seed 004, section 4 ---------------------------------------------------------------------


def test_ambiguous_acronym_clarifies_first() -> None:
    state = plan("What does the LR say about Banda Lane?")
    assert state.strategy == "clarify_then_retrieve"
    question = state.clarifying_questions[0]
    assert question.blocking and "land reference" in question.question
    assert state.retrieval_rounds == () and "ambiguous_acronym" in state.planner_meta.rationale_tags


def test_troubleshooting_error_is_bm25_heavy_and_exact() -> None:
    state = plan("Indexing fails with ValueError: bad magic number. Why?")
    assert state.strategy == "retrieve_then_answer"
    assert weights(state)["bm25"] > weights(state)["dense"]
    assert state.literal_constraints.must_match_exactly
    assert state.literal_constraints.must_preserve_terms == ("ValueError: bad magic number",)
    assert state.retrieval_rounds[0].query_variants[1] == "ValueError: bad magic number"
    assert not any(r.use_hyde for r in state.retrieval_rounds)
    assert {"troubleshooting", "error_message_present"} <= set(state.planner_meta.rationale_tags)


def test_conceptual_question_uses_hyde_and_is_vector_heavy() -> None:
    state = plan("How does the document search architecture work?")
    assert state.retrieval_rounds[0].use_hyde
    assert weights(state)["dense"] > weights(state)["bm25"]
    assert not state.literal_constraints.must_match_exactly


def test_strict_policy_lookup_gets_a_gap_filling_round() -> None:
    # No "authoritative source" exists in a catalog and no reranker in the program: a policy
    # lookup instead gets a follow-up round aimed at whatever the first one left uncovered.
    state = plan("Is the tenant of Banda Lane permitted to sublet?")
    assert [r.purpose for r in state.retrieval_rounds] == ["recall", "gap_filling"]
    gap = state.retrieval_rounds[1]
    assert gap.query_variants == (state.goal,) and not gap.use_hyde
    assert state.acceptance_criteria.must_cover_entities == ("e-bl",)


# -- one test per rule -----------------------------------------------------------------------


def test_literal_terms_mean_no_hyde_bm25_weighting_and_exact_match() -> None:
    state = plan('What does clause 4.2 of the Banda Lane lease say about "quiet enjoyment"?')
    assert state.literal_constraints.must_preserve_terms == ("clause 4.2", "quiet enjoyment")
    assert state.literal_constraints.must_match_exactly
    assert [r.purpose for r in state.retrieval_rounds] == ["precision", "gap_filling"]
    first = state.retrieval_rounds[0]
    assert not first.use_hyde and first.query_variants[1] == "clause 4.2 quiet enjoyment"
    assert weights(state) == {"bm25": 0.7, "dense": 0.3}


def test_synthesis_gets_two_or_three_rounds_with_acceptance_criteria() -> None:
    state = plan("Compare the valuations of Banda Lane and Banda Road")
    assert [r.purpose for r in state.retrieval_rounds] == ["recall", "gap_filling"]
    criteria = state.acceptance_criteria
    assert criteria.min_independent_sources == 2
    assert criteria.must_cover_entities == ("e-bl", "e-br")
    assert state.stop_conditions.max_rounds == 3
    # the gap round's queries are aimed at what is missing when it runs (tests/execution/test_rounds.py)
    assert state.retrieval_rounds[1].query_variants == (state.goal,)
    multi = plan("Who is the tenant of Banda Lane? When does the lease end?")
    assert [r.purpose for r in multi.retrieval_rounds] == ["recall", "gap_filling"]
    assert multi.acceptance_criteria.must_answer_subquestions == (
        "Who is the tenant of Banda Lane?",
        "When does the lease end?",
    )


def test_plain_lookup_is_one_round() -> None:
    state = plan("What is the rent at Banda Lane?")
    assert [r.purpose for r in state.retrieval_rounds] == ["recall"]
    assert state.retrieval_rounds[0].filters.entities == ("e-bl",)
    assert state.acceptance_criteria.min_independent_sources == 1


def test_a_question_favouring_neither_retriever_weighs_dense_search_by_the_setting() -> None:
    assert weights(plan("What is the rent at Banda Lane?")) == {"bm25": 0.85, "dense": 0.15}
    even = CONFIG.model_copy(update={"dense_weight": 0.5})
    assert weights(plan("What is the rent at Banda Lane?", config=even)) == {"bm25": 0.5, "dense": 0.5}


def test_no_retrieval_needed_answers_directly() -> None:
    greeting = plan("hello")
    assert greeting.strategy == "direct_answer" and greeting.retrieval_rounds == ()
    assert "no_retrieval_needed" in greeting.planner_meta.rationale_tags
    arithmetic = plan("What is 12 * 7?")
    assert arithmetic.strategy == "direct_answer" and "reasoning_only" in arithmetic.planner_meta.rationale_tags


def test_ambiguous_entity_blocks_only_an_unscoped_question() -> None:
    state = plan("What is the rent at Mellifera?")
    assert state.strategy == "clarify_then_retrieve"
    assert state.clarifying_questions[0].question == (
        "Which one do you mean by 'mellifera': Mellifera Gardens or Mellifera Court?"
    )
    scoped = plan("What is the rent at Mellifera?", Scope(kind="property", entity_id="e-mc"))
    assert scoped.strategy == "retrieve_then_answer"
    assert scoped.retrieval_rounds[0].filters.entities == ("e-mc",)


def test_question_about_another_property_than_the_scope_asks_without_blocking() -> None:
    state = plan("What is the rent at Banda Road?", PROPERTY)
    assert state.strategy == "retrieve_then_answer"
    question = state.clarifying_questions[0]
    assert not question.blocking
    # the gate protects the entity asked about (intake.scope.gate_entity_ids): the scope's own
    # documents, about Banda Lane, are not shown as an answer about Banda Road
    assert state.retrieval_rounds[0].filters.entities == ("e-br",)
    assert "scope_conflict" in state.planner_meta.rationale_tags


def test_entities_named_together_reach_the_gate_as_a_pair_whatever_the_scope() -> None:
    # in Banda Lane's scope the gate protects Banda Lane, but the pair the question names is kept
    # for the gate's pair rule (a document one of them owns with a third is another pair's)
    state = plan("Compare the leases of Banda Lane and Banda Road", PROPERTY)
    filters = state.retrieval_rounds[0].filters
    assert filters.entities == ("e-bl",) and set(filters.together) == {"e-bl", "e-br"}
    assert round_search(state.retrieval_rounds[0]).together_entity_ids == filters.together
    assert plan("What is the rent at Banda Road?", PROPERTY).retrieval_rounds[0].filters.together == ()


def test_personal_data_request_is_deferred_unless_allowed() -> None:
    state = plan("What is the passport number of the Banda Lane tenant?")
    assert state.strategy == "defer_or_refuse" and state.retrieval_rounds == ()
    assert "pii_request" in state.planner_meta.rationale_tags
    allowed = CONFIG.model_copy(update={"pii_allowed": True})
    assert plan("What is the passport number of the Banda Lane tenant?", config=allowed).strategy == (
        "retrieve_then_answer"
    )


def test_at_most_three_clarifying_questions() -> None:
    state = plan("Compare the LR and SLA of Mellifera and Banda")
    assert state.strategy == "clarify_then_retrieve"
    assert len(state.clarifying_questions) == 3


def test_doc_type_hint_becomes_a_filter_and_scope_becomes_a_tag() -> None:
    state = plan("Summarise the Banda Lane offer", PROPERTY)
    assert state.retrieval_rounds[0].filters.doc_types == ("offer_letter",)
    assert {"property_scope", "entity_in_scope", "doc_type_hint"} <= set(state.planner_meta.rationale_tags)


def test_budget_safety_stops_and_meta_come_from_config() -> None:
    config = CONFIG.model_copy(
        update={"max_tokens": 1234, "max_latency_ms": 5000, "max_rounds": 1, "planner_version": "t/9"}
    )
    state = plan("What is the rent at Banda Lane?", config=config)
    assert state.budget.max_tokens == 1234 and state.budget.max_latency_ms == 5000
    assert not state.safety.pii_allowed and state.stop_conditions.max_rounds == 1
    assert state.planner_meta.planner_version == "t/9"


def test_planner_is_pure_and_its_state_round_trips_as_json() -> None:
    first = plan("Compare the valuations of Banda Lane and Banda Road")
    assert plan("Compare the valuations of Banda Lane and Banda Road") == first
    assert PlannerState.model_validate_json(first.model_dump_json()) == first


# -- the PlannerState contract ---------------------------------------------------------------


def base() -> dict[str, object]:
    return plan("What is the rent at Banda Lane?").model_dump(mode="json")


def broken(**changes: object) -> dict[str, object]:
    data = base()
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"strategy": "direct_answer"}, "runs no retrieval round"),
        ({"retrieval_rounds": []}, "needs at least one retrieval round"),
        ({"strategy": "clarify_then_retrieve", "retrieval_rounds": []}, "needs a blocking clarifying question"),
        (
            {"clarifying_questions": [{"question": "Which?", "blocking": True}]},
            "blocking question means",
        ),
        ({"stop_conditions": {"max_rounds": 0, "max_total_docs": 5}}, "max_rounds"),
        ({"answer_requirements": {"format": ["table"]}}, "Extra inputs"),
        ({"rationale": "because the user asked"}, "Extra inputs"),
        (
            {"clarifying_questions": [{"question": "q", "blocking": False}] * 4},
            "at most 3",
        ),
    ],
)
def test_planner_state_rejects_inconsistent_or_prose_plans(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PlannerState.model_validate(broken(**changes))


def test_literal_constraints_forbid_hyde_and_must_appear_in_queries() -> None:
    data = plan('What does clause 4.2 say about "quiet enjoyment"?').model_dump(mode="json")
    data["retrieval_rounds"][0]["use_hyde"] = True  # type: ignore[index]
    with pytest.raises(ValidationError, match="HyDE"):
        PlannerState.model_validate(data)
    data = plan('What does clause 4.2 say about "quiet enjoyment"?').model_dump(mode="json")
    data["retrieval_rounds"][0]["query_variants"] = ["quiet enjoyment"]  # type: ignore[index]
    with pytest.raises(ValidationError, match=r"clause 4\.2"):
        PlannerState.model_validate(data)


def test_round_rules() -> None:
    good = plan("What is the rent at Banda Lane?").retrieval_rounds[0].model_dump(mode="json")
    with pytest.raises(ValidationError, match="listed twice"):
        RetrievalRound.model_validate({**good, "retrieval_modes": [{"type": "bm25", "k": 5}] * 2})
    with pytest.raises(ValidationError):
        RetrievalRound.model_validate({**good, "purpose": "search_again"})
    with pytest.raises(ValidationError, match="Extra inputs"):
        RetrievalRound.model_validate({**good, "rerank": {"enabled": True}})
    data = base()
    data["retrieval_rounds"] = [{**good, "round_id": 2}]
    with pytest.raises(ValidationError, match="round ids"):
        PlannerState.model_validate(data)
    data["retrieval_rounds"] = [{**good, "purpose": "gap_filling"}]
    with pytest.raises(ValidationError, match="first round cannot be gap_filling"):
        PlannerState.model_validate(data)
    vector_only = round_search(RetrievalRound.model_validate({**good, "retrieval_modes": [{"type": "vector", "k": 5}]}))
    assert (vector_only.mode, vector_only.weights, vector_only.depths) == ("dense", {"dense": 1.0}, {"dense": 5})
