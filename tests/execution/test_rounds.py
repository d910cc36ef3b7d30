"""The plan's retrieval rounds on the demo corpus: every PlannerState field the rounds read has an
effect here (query variants, modes, depth, weights, filters, HyDE, max_docs, literal constraints,
acceptance criteria, stop conditions), and one executor serves the whole question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from pipeline.entities import contains_term
from pipeline.execution.rounds import QuestionRetrieval, SubQuestionRetrieval
from pipeline.intake.planner import analyse_and_plan
from pipeline.intake.planner_state import PlannerState, RetrievalFilters, RetrievalMode, RoundOutput
from pipeline.intake.scope import NO_SCOPE, Scope, question_scope, resolve_scope
from pipeline.settings import CoreConfig, PlannerConfig
from pipeline.store import Store
from pipeline.types import ChunkHit
from tests.support.stores import RecordingStore

LITERAL = 'What interest does the Banda Road lease charge on "rent unpaid fourteen days after it falls due"?'
MISSING = 'What does the Banda Lane lease say about "purple elephant clause" and "rent unpaid"?'
COMPARE = "Compare the rent at Banda Lane and Banda Road"


def plan_for(store: Store, question: str, scope: Scope = NO_SCOPE, **config: Any) -> PlannerState:
    doc_types = frozenset(d.doc_type for d in store.catalog.documents.values())
    catalog = store.catalog
    _, plan = analyse_and_plan(
        question, scope, catalog.entities, doc_types, PlannerConfig(**config), vocabulary=catalog.vocabulary
    )
    return plan


def with_round(plan: PlannerState, index: int = 0, **changes: Any) -> PlannerState:
    rounds = list(plan.retrieval_rounds)
    rounds[index] = rounds[index].model_copy(update=changes)
    return plan.model_copy(update={"retrieval_rounds": tuple(rounds)})


def retrieve(
    store: Any, plan: PlannerState, scope: Scope = NO_SCOPE, sub_question: str | None = None, **kw: Any
) -> SubQuestionRetrieval:
    return QuestionRetrieval(store, question_scope(scope, store), plan, CoreConfig(), **kw).retrieve(
        sub_question or plan.goal
    )


def entity(store: Store, name: str) -> str:
    return store.resolve_entity(name).entity_id


def owners(store: Store, hits: Sequence[ChunkHit]) -> set[str]:
    return {e for h in hits for e in store.catalog.documents[h.chunk.document_id].entity_ids}


# -- a round's search ---------------------------------------------------------------------


def test_query_variants_run_as_queries_and_literal_chunks_rank_first(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Road")
    plan = plan_for(demo_store, LITERAL, scope)
    term = "rent unpaid fourteen days after it falls due"
    result = retrieve(demo_store, plan, scope, sub_question="What interest is charged on late rent?")
    first = result.rounds[0]
    # the sub-question stands in for the question variant; the literal-term variant runs as planned
    assert first.purpose == "precision" and first.queries == ("What interest is charged on late rent?", term)
    assert demo_store.call_log is not None
    assert {c.query for c in demo_store.call_log} == {"What interest is charged on late rent?", term}
    assert result.chunks and contains_term(result.chunks[0].chunk.text, term)
    with_term = [contains_term(h.chunk.text, term) for h in result.chunks]
    assert with_term == sorted(with_term, reverse=True)  # every chunk holding the term comes first
    assert [h.score for h in result.chunks] == sorted((h.score for h in result.chunks), reverse=True)
    assert result.stop_reason == "accepted"  # the term was found: the gap-filling round is not needed


def test_retrieval_modes_choose_retrievers_depth_and_weights(demo_store: Store) -> None:
    spy = RecordingStore(demo_store)
    modes = (RetrievalMode(type="bm25", k=13, alpha=0.9),)
    plan = with_round(plan_for(demo_store, "What is the rent at Banda Lane?"), retrieval_modes=modes)
    retrieve(spy, plan)
    assert spy.calls and all(c["mode"] == "bm25" and c["weights"] == {"bm25": 0.9} for c in spy.calls)
    assert [c["depths"] for c in spy.calls if c["op"] == "chunks"] == [{"bm25": 13}]
    hybrid = RecordingStore(demo_store)
    retrieve(hybrid, plan_for(demo_store, 'Which clause covers "quiet enjoyment" at Banda Lane?'))
    chunk_call = next(c for c in hybrid.calls if c["op"] == "chunks")
    assert chunk_call["mode"] == "hybrid" and chunk_call["weights"] == {"bm25": 0.7, "dense": 0.3}
    assert chunk_call["depths"] == {"bm25": 40, "dense": 40}


def test_chunk_search_weighs_the_page_index_as_configured(demo_store: Store) -> None:
    plan = plan_for(demo_store, "What is the rent at Banda Lane?")
    for weight in (0.0, 2.5):
        spy = RecordingStore(demo_store)
        config = CoreConfig(page_weight=weight, figure_weight=weight * 2)
        QuestionRetrieval(spy, question_scope(NO_SCOPE, spy), plan, config).retrieve(plan.goal)
        chunk_calls = [c for c in spy.calls if c["op"] == "chunks"]
        assert chunk_calls and {(c["page_weight"], c["figure_weight"]) for c in chunk_calls} == {(weight, weight * 2)}
    assert CoreConfig().page_weight > 0 and CoreConfig().figure_weight > 0  # on by default


def test_pages_of_figures_are_favoured_only_for_a_question_asking_a_figure(demo_store: Store) -> None:
    config = CoreConfig(page_weight=2.5, figure_weight=5.0)
    for question, figure_weight in (("What is the rent at Banda Lane?", 5.0), ("Who is the tenant at Banda Lane?", 0)):
        plan = plan_for(demo_store, question)
        spy = RecordingStore(demo_store)
        result = QuestionRetrieval(spy, question_scope(NO_SCOPE, spy), plan, config).retrieve(plan.goal)
        chunk_calls = [c for c in spy.calls if c["op"] == "chunks"]
        assert chunk_calls and {(c["page_weight"], c["figure_weight"]) for c in chunk_calls} == {(2.5, figure_weight)}
        assert all(r.search.figures == bool(figure_weight) for r in result.rounds)


def test_mode_override_keeps_the_plan_but_changes_the_retrievers(demo_store: Store) -> None:
    spy = RecordingStore(demo_store)
    retrieve(spy, plan_for(demo_store, "What is the rent at Banda Lane?"), mode="dense")
    assert spy.calls and {c["mode"] for c in spy.calls} == {"dense"}


def test_max_docs_is_how_many_documents_retrieve_docs_keeps(demo_store: Store) -> None:
    spy = RecordingStore(demo_store)
    plan = with_round(plan_for(demo_store, "What is the rent at Banda Lane?"), output=RoundOutput(max_docs=2))
    result = retrieve(spy, plan)
    assert [c["k"] for c in spy.calls if c["op"] == "documents"] == [4]  # the gate looks twice as deep
    assert len(result.rounds[0].documents) == 2
    assert len({h.chunk.document_id for h in result.chunks}) <= 2


def test_use_hyde_gives_dense_search_the_passage(demo_store: Store) -> None:
    spy = RecordingStore(demo_store)
    plan = plan_for(demo_store, "Explain how the lease renewal works at Karen Ridge")
    assert plan.retrieval_rounds[0].use_hyde
    retrieve(spy, plan, passage="A lease renews for three years on notice.")
    assert {c["dense"] for c in spy.calls if c["op"] == "chunks"} == {"A lease renews for three years on notice."}
    plain = RecordingStore(demo_store)
    retrieve(plain, with_round(plan, use_hyde=False), passage="A lease renews for three years on notice.")
    assert {c["dense"] for c in plain.calls if c["op"] == "chunks"} == {None}


def test_filter_entities_are_what_the_gate_protects(demo_store: Store) -> None:
    road = entity(demo_store, "Banda Road")
    plan = plan_for(demo_store, "What is the rent at Banda Lane?")
    as_planned = retrieve(demo_store, plan)
    assert owners(demo_store, as_planned.chunks) >= {entity(demo_store, "Banda Lane")}
    swapped = retrieve(demo_store, with_round(plan, filters=RetrievalFilters(entities=(road,))))
    kept = swapped.rounds[0].documents
    assert kept and all(road in demo_store.catalog.documents[d].entity_ids for d in kept)


def test_filter_doc_types_rank_those_documents_first(demo_store: Store) -> None:
    plan = plan_for(demo_store, "What does Banda Lane's paperwork say?")
    hint = RetrievalFilters(entities=plan.retrieval_rounds[0].filters.entities, doc_types=("valuation",))
    hinted = retrieve(demo_store, with_round(plan, filters=hint))
    first = hinted.rounds[0].documents[0]
    assert demo_store.catalog.documents[first].doc_type == "valuation"
    plain = retrieve(demo_store, plan)
    assert demo_store.catalog.documents[plain.rounds[0].documents[0]].doc_type != "valuation"


# -- acceptance and gap filling -----------------------------------------------------------


def test_an_uncovered_entity_gets_a_gap_filling_round_aimed_at_it(demo_store: Store) -> None:
    # With dense search weighed evenly, the first round finds Banda Road's tenant but not Banda Lane's.
    plan = plan_for(demo_store, COMPARE, dense_weight=0.5)
    lane, road = entity(demo_store, "Banda Lane"), entity(demo_store, "Banda Road")
    assert plan.acceptance_criteria.must_cover_entities == (lane, road)
    result = retrieve(demo_store, plan, sub_question="Who is the tenant?")
    first, gap = result.rounds
    assert not first.acceptance.met and first.acceptance.uncovered_entities == (lane,)
    # the uncovered entity named in a query; the whole question too, as sources were short
    assert gap.purpose == "gap_filling" and gap.queries == ("Who is the tenant? Banda Lane", COMPARE)
    assert gap.acceptance.met and {lane, road} <= owners(demo_store, result.chunks)
    assert result.stop_reason == "accepted"


def test_a_sub_question_naming_one_entity_covers_that_one(demo_store: Store) -> None:
    result = retrieve(demo_store, plan_for(demo_store, COMPARE), sub_question="What is the rent at Banda Road?")
    assert [r.purpose for r in result.rounds] == ["recall"] and result.stop_reason == "accepted"


def test_a_missing_exact_term_is_searched_alone(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    plan = plan_for(demo_store, MISSING, scope)
    assert plan.literal_constraints.must_match_exactly
    result = retrieve(demo_store, plan, scope)
    first, gap = result.rounds
    assert first.acceptance.missing_terms == ("purple elephant clause",)
    assert gap.queries == ("purple elephant clause",)
    assert not gap.acceptance.met and result.stop_reason == "rounds_exhausted"
    loose = plan.model_copy(
        update={"literal_constraints": plan.literal_constraints.model_copy(update={"must_match_exactly": False})}
    )
    assert [r.purpose for r in retrieve(demo_store, loose, scope).rounds] == ["precision"]  # nothing missing


def test_min_independent_sources(demo_store: Store) -> None:
    plan = plan_for(demo_store, COMPARE)
    strict = plan.model_copy(
        update={"acceptance_criteria": plan.acceptance_criteria.model_copy(update={"min_independent_sources": 20})}
    )
    result = retrieve(demo_store, strict, sub_question="What is the rent at Banda Road?")
    assert result.rounds[0].acceptance.sources_short
    assert result.rounds[1].queries == (COMPARE,)  # the whole question reaches other documents
    # asked with the question itself, there is no other query to try
    assert retrieve(demo_store, strict).stop_reason == "no_targeted_query"


# -- stop conditions ----------------------------------------------------------------------


def test_max_rounds_stops_before_the_gap_round(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    result = retrieve(demo_store, plan_for(demo_store, MISSING, scope, max_rounds=1), scope)
    assert len(result.rounds) == 1 and result.stop_reason == "max_rounds"


def test_max_total_docs_counts_documents_sent_over_the_question(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    plan = plan_for(demo_store, MISSING, scope, max_total_docs=3)
    retrieval = QuestionRetrieval(demo_store, question_scope(scope, demo_store), plan, CoreConfig())
    first = retrieval.retrieve(plan.goal)
    assert len(retrieval.executor.sent_documents) >= 3
    assert len(first.rounds) == 1 and first.stop_reason == "max_total_docs"
    # a later sub-question still gets its first round
    second = retrieval.retrieve("What does the lease say about repairs?")
    assert len(second.rounds) == 1 and second.chunks


def test_latency_deadline_stops_follow_up_rounds(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    plan = plan_for(demo_store, MISSING, scope, max_latency_ms=1000)
    now = [0.0]
    retrieval = QuestionRetrieval(
        demo_store, question_scope(scope, demo_store), plan, CoreConfig(), clock=lambda: now[0], started=0.0
    )
    now[0] = 0.5
    assert len(retrieval.retrieve(plan.goal).rounds) == 2
    now[0] = 1.0
    late = retrieval.retrieve("What does the lease say about the deposit?")
    assert len(late.rounds) == 1 and late.stop_reason == "deadline" and late.chunks


def test_no_new_information_rounds(demo_store: Store) -> None:
    # Banda Road asked inside Banda Lane's own documents: the gate keeps nothing, the first round adds nothing
    scope = resolve_scope(demo_store, document_ids=demo_store.entity_document_ids(entity(demo_store, "Banda Lane")))
    plan = plan_for(demo_store, "Is the tenant of Banda Road permitted to sublet?", scope)
    assert [r.purpose for r in plan.retrieval_rounds] == ["recall", "gap_filling"]
    result = retrieve(demo_store, plan, scope)
    assert len(result.rounds) == 1 and result.stop_reason == "no_new_information" and result.chunks == ()
    patient = plan.model_copy(
        update={"stop_conditions": plan.stop_conditions.model_copy(update={"no_new_information_rounds": 2})}
    )
    assert len(retrieve(demo_store, patient, scope).rounds) == 2


# -- one executor per question ------------------------------------------------------------


def test_the_gate_judges_each_document_once_per_question(demo_store: Store) -> None:
    spy = RecordingStore(demo_store)
    plan = plan_for(demo_store, "What is the value of Banda Lane?")
    retrieval = QuestionRetrieval(spy, question_scope(NO_SCOPE, spy), plan, CoreConfig())
    retrieval.retrieve("What is the value of Banda Lane?")
    excluded_first = {e.document_id for e in retrieval.executor.tools.gate_exclusions}
    spy.calls.clear()
    retrieval.retrieve("What is the market value of Banda Lane?")
    found_again = {d for c in spy.calls if c["op"] == "documents" for d in c["found"]}
    assert excluded_first & found_again  # the second search met documents the gate had excluded
    excluded = [e.document_id for e in retrieval.executor.tools.gate_exclusions]
    assert len(excluded) == len(set(excluded))  # ... and did not judge (or record) them again


def test_a_tool_given_up_stays_given_up_for_the_question(demo_store: Store) -> None:
    spy = RecordingStore(demo_store, failures=[OSError("document index offline")])
    plan = plan_for(demo_store, "What is the value of Banda Lane?")
    retrieval = QuestionRetrieval(spy, question_scope(NO_SCOPE, spy), plan, CoreConfig())
    retrieval.retrieve("What is the value of Banda Lane?")
    retrieval.retrieve("Who owns Banda Lane?")
    assert [c["op"] for c in spy.calls] == ["documents"]  # never asked again after it was given up
    assert retrieval.executor.given_up == ("retrieve_docs", "retrieve_chunks")
    assert retrieval.executor.stop_reason == "all_tools_given_up"
    message = retrieval.user_message
    assert message is not None and message.startswith("Some steps could not be completed")
    assert "document index offline" in message


@pytest.mark.parametrize("scope_kind", ["chip", "property"])
def test_rounds_stay_inside_the_scope(demo_store: Store, scope_kind: str) -> None:
    lane = sorted(demo_store.entity_document_ids(entity(demo_store, "Banda Lane")))
    scope = (
        resolve_scope(demo_store, document_ids=lane[:3])
        if scope_kind == "chip"
        else resolve_scope(demo_store, property_ref="Banda Lane")
    )
    # a property reads what it owns and what the manifest shares with every entity
    allowed = set(lane[:3]) if scope_kind == "chip" else set(demo_store.entity_scope(entity(demo_store, "Banda Lane")))
    result = retrieve(demo_store, plan_for(demo_store, COMPARE, scope), scope, sub_question="Who is the tenant?")
    assert demo_store.call_log is not None
    assert all(set(c.document_ids or ()) <= allowed for c in demo_store.call_log)
    assert {h.chunk.document_id for h in result.chunks} <= allowed
