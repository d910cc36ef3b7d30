"""The executor on the demo corpus: the three traces of seed 000 section 6, every guard
branch, tool failures, and a property test that no bad value ever reaches a store call."""

from __future__ import annotations

import copy
import dataclasses
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.entities import find_entity_mentions
from pipeline.errors import RetrievalRateLimitedError, ScopeViolationError
from pipeline.execution.executor import ExecutionResult, StepExecutor
from pipeline.execution.steps import SEARCH_DOCS_REF, Step, Steps, scope_steps
from pipeline.execution.tools import RetrievalTools, SearchSettings, SearchStore
from pipeline.guards.ids import is_canonical_uuid
from pipeline.intake.scope import NO_SCOPE, Scope, gate_entity_ids, question_scope, resolve_scope
from pipeline.settings import CoreConfig
from pipeline.store import Store, open_store
from pipeline.store.embedders import HashEmbedder
from pipeline.types import ChunkHit, DocumentHit
from tests.support.stores import RecordingStore


def ids_by_path(store: Store) -> dict[str, str]:
    return {d.relpath: d.document_id for d in store.catalog.documents.values()}


def mentioned(store: Store, question: str) -> list[str]:
    found = find_entity_mentions(question, list(store.catalog.entities.values()), store.catalog.vocabulary)
    return [m.entity_id for m in found if m.entity_id]


def execute(store: SearchStore, plan: Steps, scope: Scope, gate_ids: Sequence[str] = ()) -> ExecutionResult:
    """`plan` run by a fresh question's executor, the gate protecting `gate_ids`."""
    return StepExecutor(store, question_scope(scope, store)).run(plan, SearchSettings(gate_entity_ids=tuple(gate_ids)))


def run(store: Store, plan: Steps, scope: Scope, question: str = "") -> ExecutionResult:
    return execute(store, plan, scope, gate_entity_ids(scope, mentioned(store, question)))


def assert_store_saw_only_valid_ids(store: Store, scope: Scope) -> None:
    allowed = question_scope(scope, store).allowed
    assert store.call_log is not None
    for call in store.call_log:
        if call.document_ids is None:
            assert scope.kind == "no_scope" and call.operation == "search_documents"
            continue
        for value in call.document_ids:
            assert is_canonical_uuid(value) and value in store.catalog.documents
            assert allowed is None or value in allowed


def owner_slugs(store: Store, document_id: str) -> set[str]:
    return {store.catalog.entities[e].slug for e in store.catalog.documents[document_id].entity_ids}


# -- seed 000, section 6: the three traces ------------------------------------------------


def test_trace_no_scope_two_steps_step_two_gets_every_id_step_one_found(demo_store: Store) -> None:
    question = "What is the value of Banda Lane?"
    plan = scope_steps(question_scope(NO_SCOPE, demo_store), question)
    result = run(demo_store, plan, NO_SCOPE, question)
    search_docs, search_chunks = result.trace.steps
    assert (search_docs.tool, search_chunks.tool) == ("retrieve_docs", "retrieve_chunks")
    assert search_chunks.requested == (SEARCH_DOCS_REF,)
    assert search_docs.result_ids and search_chunks.sent == search_docs.result_ids
    assert demo_store.call_log is not None
    assert [(c.operation, c.document_ids) for c in demo_store.call_log] == [
        ("search_documents", None),
        ("search_chunks", search_docs.result_ids),
    ]
    assert result.trace.rejections == () and result.trace.fallbacks == ()
    assert result.chunks and all("banda-lane" in owner_slugs(demo_store, h.chunk.document_id) for h in result.chunks)
    assert_store_saw_only_valid_ids(demo_store, NO_SCOPE)


def test_trace_chip_one_step_on_exactly_the_selected_ids(demo_store: Store) -> None:
    paths = ids_by_path(demo_store)
    chip = [paths["banda-lane/lease.pdf"], paths["banda-lane/valuation.md"]]
    scope = resolve_scope(demo_store, document_ids=chip)
    plan = scope_steps(question_scope(scope, demo_store), "What is the monthly rent?")
    result = run(demo_store, plan, scope, "What is the monthly rent?")
    assert demo_store.call_log is not None
    assert [(c.operation, c.document_ids) for c in demo_store.call_log] == [("search_chunks", tuple(chip))]
    assert {h.chunk.document_id for h in result.chunks} <= set(chip)
    assert result.chunks
    assert_store_saw_only_valid_ids(demo_store, scope)


def test_chunk_search_leaves_out_the_names_of_the_entity_owning_every_document(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    question = "What is the monthly rent at Banda Lane, and how does Banda Road compare?"
    run(demo_store, scope_steps(question_scope(scope, demo_store), question), scope, question)
    assert demo_store.call_log is not None
    (call,) = [c for c in demo_store.call_log if c.operation == "search_chunks"]
    # On every page of Banda Lane's documents its name ranks nothing; another property's name is a claim.
    assert call.query == "What is the monthly rent at , and how does Banda Road compare?"
    demo_store.call_log.clear()
    paths = ids_by_path(demo_store)
    mixed = resolve_scope(demo_store, document_ids=[paths["banda-lane/lease.pdf"], paths["banda-road/lease.md"]])
    run(demo_store, scope_steps(question_scope(mixed, demo_store), question), mixed, question)
    assert [c.query for c in demo_store.call_log if c.operation == "search_chunks"] == [question]  # no one owner


def test_a_chunk_query_left_with_nothing_to_match_searches_with_the_names(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    question = "Banda Lane zyzzogeton"  # without the name, no BM25 term of its documents is left
    steps = scope_steps(question_scope(scope, demo_store), question)
    result = StepExecutor(demo_store, question_scope(scope, demo_store)).run(steps, SearchSettings(mode="bm25"))
    assert demo_store.call_log is not None
    assert [c.query for c in demo_store.call_log if c.operation == "search_chunks"] == ["zyzzogeton", question]
    assert result.chunks


def test_trace_property_ids_resolved_from_the_catalog_never_from_lm_text(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Banda Lane")
    expected = tuple(demo_store.entity_scope(scope.entity_id or ""))
    lm_plan = Steps(
        steps=(
            Step(
                step_id="s1",
                tool="retrieve_chunks",
                query="Who is the tenant?",
                document_ids=("Documents in scope: see workspace", expected[0].upper()),
            ),
        )
    )
    result = run(demo_store, lm_plan, scope, "Who is the tenant?")
    step = result.trace.steps[0]
    assert [r.reason for r in step.rejections] == ["not_canonical_uuid", "not_canonical_uuid"]
    assert step.filled_from == "scope_property"
    assert step.sent is not None and set(step.sent) <= set(expected)
    assert demo_store.call_log is not None
    assert [c.operation for c in demo_store.call_log] == ["search_chunks"]
    assert set(demo_store.call_log[0].document_ids or ()) <= set(expected)
    # Banda Lane's own documents, and the annex the manifest shares with every property
    assert all(owner_slugs(demo_store, h.chunk.document_id) in ({"banda-lane"}, set()) for h in result.chunks)
    assert_store_saw_only_valid_ids(demo_store, scope)


# -- guard branches inside the executor ------------------------------------------------------


def chunk_plan(values: Sequence[str], query: str = "What is the rent?") -> Steps:
    return Steps(steps=(Step(step_id="s1", tool="retrieve_chunks", query=query, document_ids=tuple(values)),))


def test_every_rejected_value_is_traced_with_its_reason(demo_store: Store) -> None:
    paths = ids_by_path(demo_store)
    lane = paths["banda-lane/lease.pdf"]
    road = paths["banda-road/lease.md"]
    stranger = str(uuid.uuid4())
    scope = Scope(kind="chip", document_ids=(lane,))
    values = [lane, lane.upper(), "{" + lane + "}", "<from_step_nowhere>", road, stranger, "see above"]
    result = run(demo_store, chunk_plan(values), scope)
    reasons = {(r.value, r.reason) for r in result.trace.rejections}
    assert reasons == {
        (repr(lane.upper()), "not_canonical_uuid"),
        (repr("{" + lane + "}"), "not_canonical_uuid"),
        (repr("<from_step_nowhere>"), "unresolvable_step_reference"),
        (repr(road), "out_of_scope"),
        (repr(stranger), "unknown_document"),
        (repr("see above"), "not_canonical_uuid"),
    }
    assert result.trace.steps[0].sent == (lane,)
    assert_store_saw_only_valid_ids(demo_store, scope)


def test_chip_step_with_no_valid_ids_is_retried_with_the_chip(demo_store: Store) -> None:
    lane = ids_by_path(demo_store)["banda-lane/lease.pdf"]
    scope = Scope(kind="chip", document_ids=(lane,))
    result = run(demo_store, chunk_plan(["placeholder"]), scope)
    step = result.trace.steps[0]
    assert step.status == "ok" and step.filled_from == "scope_documents" and step.sent == (lane,)
    assert result.trace.fallbacks == ()


def test_property_step_with_no_valid_ids_is_retried_with_the_property(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="dik-dik-lane")
    result = run(demo_store, chunk_plan(["<document ids>"]), scope)
    step = result.trace.steps[0]
    assert step.filled_from == "scope_property"
    assert set(step.sent or ()) <= set(demo_store.entity_scope(scope.entity_id or ""))


def test_no_scope_step_with_no_ids_falls_back_to_docs_then_chunks(demo_store: Store) -> None:
    question = "What is the value of Banda Road?"
    result = run(demo_store, chunk_plan(["<document ids from the workspace>"], question), NO_SCOPE, question)
    first, docs, chunks = result.trace.steps
    assert first.status == "error" and first.error is not None and first.error.code == "missing_param"
    assert (docs.tool, docs.fallback_for, chunks.tool, chunks.fallback_for) == (
        "retrieve_docs",
        "s1",
        "retrieve_chunks",
        "s1",
    )
    assert chunks.sent == docs.result_ids and result.chunks
    assert result.user_message is None
    assert_store_saw_only_valid_ids(demo_store, NO_SCOPE)


def test_entity_gate_runs_on_found_documents_and_is_traced(demo_store: Store) -> None:
    question = "What is the value of Banda Lane?"
    result = run(demo_store, scope_steps(question_scope(NO_SCOPE, demo_store), question), NO_SCOPE, question)
    paths = {d.document_id: d.relpath for d in demo_store.catalog.documents.values()}
    excluded = {paths[e.document_id]: e.reasons for e in result.trace.gate_exclusions}
    # a copy filed in Banda Lane's folder that the catalog gives to another property is not Banda Lane's
    assert excluded["banda-lane/offer-letter-banda-lane-copy.pdf"] == ("owned_by_other_entity",)
    kept = {paths[h.document.document_id] for h in result.documents}
    assert kept and all(p.startswith("banda-lane/") for p in kept)
    assert not kept & {"banda-lane/offer-letter-banda-lane-copy.pdf", "banda-lane/valuation-banda-copy.md"}


def test_gate_also_checks_ids_that_did_not_come_from_retrieve_docs(demo_store: Store) -> None:
    paths = ids_by_path(demo_store)
    copy = paths["banda-lane/offer-letter-banda-lane-copy.pdf"]
    lane = paths["banda-lane/lease.pdf"]
    scope = Scope(kind="chip", document_ids=(copy, lane))
    result = run(
        demo_store,
        scope_steps(question_scope(scope, demo_store), "Banda Lane rent"),
        scope,
        "Banda Lane rent",
    )
    assert result.trace.steps[0].sent == (lane,)
    assert [e.document_id for e in result.trace.gate_exclusions] == [copy]


def test_chunk_backstop_leaves_the_chunks_of_the_asked_entitys_own_documents(demo_store: Store) -> None:
    scope = resolve_scope(demo_store, property_ref="Dik Dik Lane")
    query = "comparable sale Banda Lane upper bound"
    # the gate protects the scope's Dik Dik Lane; the search words pull in its valuation's pages about a
    # comparable sale at Banda Lane: Dik Dik Lane's own document, so the backstop does not judge them
    result = run(demo_store, scope_steps(question_scope(scope, demo_store), query), scope)
    assert result.chunks and result.trace.chunk_exclusions == ()
    owned = set(demo_store.entity_document_ids(scope.entity_id or ""))
    assert {h.chunk.document_id for h in result.chunks} <= owned | set(demo_store.entity_scope(scope.entity_id or ""))
    assert any("banda lane" in h.chunk.text.casefold() for h in result.chunks)


def test_chunk_backstop_runs_on_the_chunks_of_documents_the_text_rules_judge(demo_store: Store) -> None:
    # the same search where the manifest asks the text rules to judge owned documents too
    documents = {
        d: dataclasses.replace(doc, text_rules=bool(doc.entity_ids)) for d, doc in demo_store.catalog.documents.items()
    }
    catalog = copy.copy(demo_store.catalog)
    catalog.documents = documents
    judged = dataclasses.replace(demo_store, catalog=catalog)
    scope = resolve_scope(judged, property_ref="Dik Dik Lane")
    query = "comparable sale Banda Lane upper bound"
    result = run(judged, scope_steps(question_scope(scope, judged), query), scope)
    assert result.trace.chunk_exclusions
    dropped = {e.row for e in result.trace.chunk_exclusions}
    assert not dropped & {h.chunk.row for h in result.chunks}
    assert all("Banda Lane" in e.other_addresses or e.other_addresses for e in result.trace.chunk_exclusions)


def test_scope_violation_is_refused_before_the_store(demo_store: Store) -> None:
    lane = ids_by_path(demo_store)["banda-lane/lease.pdf"]
    tools = RetrievalTools(
        demo_store, question_scope(Scope(kind="chip", document_ids=(lane,)), demo_store), CoreConfig(), SearchSettings()
    )
    assert tools.ensure_sendable([lane]) == (lane,)
    with pytest.raises(ScopeViolationError) as info:
        tools.ensure_sendable([lane, lane.upper()])
    assert info.value.values == [repr(lane.upper())]


# -- tool failures through the loop ----------------------------------------------------------


def test_rate_limited_search_is_retried(demo_store: Store) -> None:
    store = RecordingStore(demo_store, [RetrievalRateLimitedError("slow down")])
    question = "Banda Lane valuation"
    result = execute(store, scope_steps(question_scope(NO_SCOPE, store), question), NO_SCOPE)
    assert result.trace.steps[0].status == "ok" and len(result.trace.calls[0].attempts) == 2
    assert result.chunks and result.user_message is None


def test_unavailable_search_is_given_up_and_named_to_the_user(demo_store: Store) -> None:
    store = RecordingStore(demo_store, [OSError("document index offline")])
    result = execute(store, scope_steps(question_scope(NO_SCOPE, store), "Banda Lane value"), NO_SCOPE)
    statuses = [(s.step_id, s.status) for s in result.trace.steps]
    assert statuses == [
        ("search_docs", "error"),
        ("search_chunks", "error"),
        ("search_chunks__fallback", "skipped"),
    ]
    assert result.trace.steps[1].rejections[0].reason == "unresolvable_step_reference"
    assert result.trace.given_up == ("retrieve_docs",)
    assert result.user_message is not None and "retrieve_docs" in result.user_message
    assert "document index offline" in result.user_message
    assert result.chunks == () and result.documents == ()


def test_fallback_is_skipped_when_the_same_search_found_nothing(demo_store: Store) -> None:
    class Empty(RecordingStore):
        def search_documents(self, *args: Any, **kwargs: Any) -> list[DocumentHit]:
            return []

    store = Empty(demo_store, [])
    result = execute(store, scope_steps(question_scope(NO_SCOPE, store), "anything"), NO_SCOPE)
    assert result.trace.steps[-1].note == "fallback skipped: the same search already found no documents"
    assert result.chunks == ()


# -- property: nothing but canonical in-scope ids reach the store ----------------------------


@pytest.fixture(scope="module")
def shared_store(demo_index_dir: Path) -> Store:
    store = open_store(demo_index_dir, HashEmbedder(64))
    store.call_log = []
    return store


def _values(store: Store) -> st.SearchStrategy[str]:
    ids = sorted(store.catalog.documents)
    return st.one_of(
        st.sampled_from(ids),
        st.sampled_from(ids).map(str.upper),
        st.sampled_from(ids).map(lambda s: "{" + s + "}"),
        st.sampled_from(ids).map(lambda s: "urn:uuid:" + s),
        st.sampled_from(ids).map(lambda s: s.replace("-", "")),
        st.sampled_from(ids).map(lambda s: s + " "),
        st.uuids().map(str),
        st.text(max_size=30),
        st.sampled_from(["<from_step_search_docs>", "<from_step_a>", "<from_step_b>", "<from_step_zzz>"]),
    )


@st.composite
def executions(draw: st.DrawFn, store: Store) -> tuple[Steps, Scope, str]:
    ids = sorted(store.catalog.documents)
    entities = sorted(store.catalog.entities)
    scope = draw(
        st.one_of(
            st.just(NO_SCOPE),
            st.lists(st.sampled_from(ids), min_size=1, max_size=3).map(
                lambda d: Scope(kind="chip", document_ids=tuple(d))
            ),
            st.sampled_from(entities).map(lambda e: Scope(kind="property", entity_id=e)),
        )
    )
    step_ids = draw(st.lists(st.sampled_from(["a", "b", "search_docs", "c"]), min_size=1, max_size=3, unique=True))
    steps = tuple(
        Step(
            step_id=sid,
            tool=draw(st.sampled_from(["retrieve_docs", "retrieve_chunks"])),
            query=draw(st.sampled_from(["rent at Banda Lane", "valuation", "Mellifera Court lease"])),
            document_ids=tuple(draw(st.lists(_values(store), max_size=4))),
        )
        for sid in step_ids
    )
    return Steps(steps=steps), scope, steps[0].query


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_no_generated_value_that_is_not_a_canonical_in_scope_id_reaches_the_store(
    shared_store: Store, data: st.DataObject
) -> None:
    plan, scope, question = data.draw(executions(shared_store))
    assert shared_store.call_log is not None
    shared_store.call_log.clear()
    result = run(shared_store, plan, scope, question)
    assert_store_saw_only_valid_ids(shared_store, scope)
    allowed = question_scope(scope, shared_store).allowed
    for hit in result.chunks:
        assert allowed is None or hit.chunk.document_id in allowed
    chunk_hits: tuple[ChunkHit, ...] = result.chunks
    assert len({h.chunk.row for h in chunk_hits}) == len(chunk_hits)
