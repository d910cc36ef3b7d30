"""The program on the demo corpus with scripted LMs: the four scope cases."""

from __future__ import annotations

import dspy

from pipeline.guards.ids import is_canonical_uuid
from pipeline.intake.scope import Scope, resolve_scope
from pipeline.program.events import Completed, Decomposed, Filtering, GeneratingSubquestion, Retrieving
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.fakes import ONE_SECTION_PHASES, cooperative, scripted_lm


def _run(store: Store, question: str, scope: Scope, sub_questions: list[str] | None = None) -> tuple[list, object]:
    program = ScopedQA(store)
    with dspy.context(lm=scripted_lm(cooperative(sub_questions))):
        events = list(program.stream(question, scope))
    return events, events[-1].trace


def _entity_docs(store: Store, name: str) -> set[str]:
    """The documents in the entity's scope: those it owns, and the annex shared with every property."""
    return set(store.entity_scope(store.resolve_entity(name).entity_id))


def test_no_scope_two_step_plan_and_event_order(demo_store: Store) -> None:
    events, trace = _run(demo_store, "What is the monthly rent at Banda Lane?", resolve_scope(demo_store))
    phases = [e.phase for e in events]
    assert phases == ONE_SECTION_PHASES
    assert isinstance(events[1], Decomposed) and isinstance(events[2], Retrieving) and isinstance(events[3], Filtering)
    assert [s["tool"] for s in trace.sub_questions[0].steps][:2] == ["retrieve_docs", "retrieve_chunks"]
    assert trace.lm_calls == 3
    done = events[-1]
    assert isinstance(done, Completed) and done.answer.startswith("## 1. ")
    assert all(is_canonical_uuid(d) for call in demo_store.call_log for d in (call.document_ids or ()))


def test_chip_reads_and_cites_only_selected(demo_store: Store) -> None:
    chosen = sorted(_entity_docs(demo_store, "Banda Road"))[:2]
    scope = resolve_scope(demo_store, document_ids=chosen)
    events, trace = _run(demo_store, "What does the lease say?", scope, ["Who is the tenant?", "What is the rent?"])
    done = events[-1]
    assert isinstance(done, Completed) and len(done.sections) == 2
    assert [e.index for e in events if isinstance(e, GeneratingSubquestion)] == [0, 1]
    assert [s["tool"] for sq in trace.sub_questions for s in sq.steps] == ["retrieve_chunks", "retrieve_chunks"]
    read = {c.document_id for sq in trace.sub_questions for c in sq.chunks}
    cited = {s.document_id for sec in done.sections for s in sec.sources}
    assert read and read <= set(chosen) and cited <= set(chosen)
    assert all(set(call.document_ids or ()) <= set(chosen) for call in demo_store.call_log)


def test_property_scope_resolves_ids_in_code(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Mellifera Gardens")
    allowed = _entity_docs(demo_store, "Mellifera Gardens")
    events, trace = _run(demo_store, "What did the inspection find?", scope)
    done = events[-1]
    assert isinstance(done, Completed)
    assert {c.document_id for sq in trace.sub_questions for c in sq.chunks} <= allowed
    assert {s.document_id for sec in done.sections for s in sec.sources} <= allowed
    assert demo_store.call_log and all(set(c.document_ids or ()) <= allowed for c in demo_store.call_log)


def test_wrong_property_never_read_or_cited(demo_store: Store) -> None:
    # No scope, but the question names Banda Lane: Banda Road and the mislabelled copies must not be cited.
    events, trace = _run(demo_store, "Summarise the Banda Lane offer letter", resolve_scope(demo_store))
    done = events[-1]
    assert isinstance(done, Completed)
    banda_lane = _entity_docs(demo_store, "Banda Lane")
    cited = {s.document_id for sec in done.sections for s in sec.sources}
    read = {c.document_id for sq in trace.sub_questions for c in sq.chunks}
    assert cited and cited <= banda_lane
    assert read <= banda_lane


def test_conceptual_question_adds_one_hyde_call_for_dense_search(demo_store: Store) -> None:
    events, trace = _run(demo_store, "Explain how the lease renewal works at Karen Ridge", resolve_scope(demo_store))
    assert isinstance(events[-1], Completed)
    assert trace.planner["retrieval_rounds"][0]["use_hyde"] is True
    assert trace.lm_calls == 4 and "hyde" in trace.timings


def test_literal_terms_forbid_hyde(demo_store: Store) -> None:
    events, trace = _run(demo_store, 'Explain the clause "L.R. NO: 2327/30"', resolve_scope(demo_store))
    assert isinstance(events[-1], Completed)
    assert trace.planner["literal_constraints"]["must_match_exactly"] is True
    assert not any(r["use_hyde"] for r in trace.planner["retrieval_rounds"]) and trace.lm_calls == 3


def test_blocking_ambiguity_asks_before_reading(demo_store: Store) -> None:
    events, trace = _run(demo_store, "What is the rent at Banda?", resolve_scope(demo_store))
    done = events[-1]
    assert isinstance(done, Completed) and done.strategy == "clarify_then_retrieve"
    assert done.clarifying_questions and trace.lm_calls == 0 and demo_store.call_log == []


def test_each_stage_event_is_sent_before_its_lm_call(demo_store: Store) -> None:
    """The stream yields a stage's event as the stage starts: `generating` before the answer call, not after."""
    log: list[str] = []
    respond = cooperative()

    def logged(prompt: str) -> object:
        kind = "score" if "[[ ## groups ## ]]" in prompt else "answer" if "sections_context" in prompt else "decompose"
        log.append(f"call {kind}")
        return respond(prompt)

    program = ScopedQA(demo_store)
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    with dspy.context(lm=scripted_lm(logged)):
        for event in program.stream("What is the monthly rent?", scope):
            log.append(event.phase)
    assert log == [
        "decomposing",
        "call decompose",
        "decomposed",
        "retrieving",
        "filtering",
        "call score",
        "generating",
        "call answer",
        "generating_subquestion",
        "completed",
    ]
