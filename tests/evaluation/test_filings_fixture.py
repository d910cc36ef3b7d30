"""The filings fixture (datasets/filings, traces in datasets/filings-traces): invented companies' annual
and quarterly reports from one template. Names as people write them (first word, initials, legal form
left out, a phrase one name holds), an alias two companies share, a report naming another company as
its customer, names long enough to make long clarifying questions; and the implicit entity scope of a
question with no scope that names a company."""

from __future__ import annotations

import logging
from pathlib import Path

import dspy
import pytest

from pipeline.evaluation.examples import load_examples
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.ownership import ownership_gaps
from pipeline.evaluation.scoring import score_retrieval
from pipeline.intake.planner import plan_in_scope
from pipeline.intake.scope import NO_SCOPE, Scope, resolve_scope
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from tests.support.fakes import cooperative, scripted_lm
from tests.support.paths import DATASETS
from tests.support.scripts import load_script

FILINGS = DATASETS / "filings"
TRACES = DATASETS / "filings-traces" / "dev.jsonl"
EXAMPLES = load_examples(TRACES)
LONG_A = "Consolidated Northern Territories Mineral Exploration and Development Holdings Corporation"
LONG_B = "Amalgamated Transcontinental Railway Freight Logistics and Warehousing Services Incorporated"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("filings-index")
    build_index(FILINGS, out, HashEmbedder(64))
    return out


@pytest.fixture
def store(index_dir: Path) -> Store:
    return open_store(index_dir, HashEmbedder(64))


def _slug_of(store: Store, entity_id: str) -> str:
    return store.catalog.entities[entity_id].slug


def _plan(store: Store, question: str, scope: Scope = NO_SCOPE) -> tuple[list[str], object, object]:
    doc_types = {d.doc_type for d in store.catalog.documents.values()}
    intake, plan, scoped = plan_in_scope(question, scope, store, doc_types)
    return [_slug_of(store, e) for e in intake.entity_ids], plan, scoped


def _ask(store: Store, question: str, scope: Scope) -> Completed:
    with dspy.context(lm=scripted_lm(cooperative())):
        done = list(ScopedQA(store).stream(question, scope))[-1]
    assert isinstance(done, Completed) and done.trace is not None
    return done


def test_the_committed_fixture_and_traces_are_what_the_script_writes(tmp_path: Path) -> None:
    written = load_script("make_filings_fixture").write(tmp_path / "filings", tmp_path / "traces")
    committed = {p: FILINGS / p.relative_to(tmp_path / "filings") for p in written if "filings" in p.parts}
    committed[tmp_path / "traces" / "dev.jsonl"] = TRACES
    stale = [str(p) for p, c in committed.items() if p.read_bytes() != c.read_bytes()]
    assert stale == [], "datasets/filings is stale: run scripts/make_filings_fixture.py"


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_every_example_reads_no_other_companys_report_and_finds_its_own(store: Store, mode: str) -> None:
    for example in EXAMPLES:
        result = score_retrieval(store, resolve_example(example, store), mode=mode)  # type: ignore[arg-type]
        assert result.scores.wrong_property_citations == 0, example.question
        assert result.scores.invalid_ids == 0, example.question
        if example.gold_documents:
            assert result.scores.recall_at_10 == 1.0, example.question
        if example.expect_scope_note:
            assert result.scores.scope_note == 1.0, example.question


def test_every_report_is_read_in_its_owners_scope(store: Store) -> None:
    assert ownership_gaps(store) == []


@pytest.mark.parametrize(
    ("question", "slug"),
    [
        ("What was Halcyon's total revenue for fiscal 2023?", "halcyon"),  # the first word of the name
        ("What net income did HRI report?", "halcyon"),  # its initials
        ("What did Halcyon Resorts International earn?", "halcyon"),  # without its legal form
        ("What did Corvane Textiles Corp. earn?", "corvane"),  # another legal form than the catalog's
        ("What was Pacific Leju's revenue?", "pacific-leju"),  # a phrase only one name holds
        ("What did Leju Holdings Ltd report?", "leju"),  # "Ltd" names no company on its own
    ],
)
def test_a_company_is_recognised_as_people_write_its_name(store: Store, question: str, slug: str) -> None:
    named, plan, _ = _plan(store, question)
    assert named == [slug]
    assert plan.strategy == "retrieve_then_answer"  # type: ignore[attr-defined]


def test_an_alias_two_companies_share_asks_which_one_and_is_a_warning_at_index_time(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, store: Store
) -> None:
    named, plan, _ = _plan(store, "What was Norvane's total revenue for fiscal 2023?")
    assert named == [] and plan.strategy == "clarify_then_retrieve"  # type: ignore[attr-defined]
    (question,) = plan.clarifying_questions  # type: ignore[attr-defined]
    assert question.question == "Which one do you mean by 'Norvane': Norvane Limited or Norvane LLC?"
    # the full name says which
    assert _plan(store, "What was Norvane Limited's total revenue?")[0] == ["norvane-limited"]
    with caplog.at_level(logging.WARNING, logger="pipeline.store.build"):
        report = build_index(FILINGS, tmp_path / "index", HashEmbedder(64))
    assert ("norvane", ("Norvane LLC", "Norvane Limited")) in report.shared_names
    assert "the name 'norvane' is given to Norvane LLC and Norvane Limited" in caplog.text


def test_long_names_in_a_clarifying_question_are_cut_not_raised(store: Store) -> None:
    question = f"Compare the fiscal 2023 revenue of {LONG_A} and {LONG_B}."
    halcyon = resolve_scope(store, property_ref="halcyon")
    named, plan, _ = _plan(store, question, halcyon)
    assert named == ["northern-mineral", "transcontinental-freight"]
    (conflict,) = plan.clarifying_questions  # type: ignore[attr-defined]
    assert len(conflict.question) <= 300 and conflict.question.endswith("…")
    assert plan.planner_meta.cuts == ("clarifying question of 433 characters cut to 300",)  # type: ignore[attr-defined]
    done = _ask(store, question, halcyon)
    assert done.scope_note is not None and done.scope_note.kind == "other_entity" and done.sections == ()


def test_a_question_naming_a_company_searches_its_reports_from_the_start(store: Store) -> None:
    done = _ask(store, "What was Halcyon's total revenue for fiscal 2023?", NO_SCOPE)
    assert done.trace is not None
    halcyon = store.resolve_entity("halcyon").entity_id
    own = set(store.entity_document_ids(halcyon))
    assert done.implicit_scope == ("Halcyon Resorts International Inc.",)
    assert done.trace.implicit_scope == [halcyon]
    assert (
        set(done.trace.store_document_ids) <= own
        and {c.document_id for sq in done.trace.sub_questions for c in sq.chunks} <= own
    )
    assert any(i.guard == "scope" and i.target == "implicit" for i in done.trace.interventions)
    # a question naming no company searches everything
    open_question = _ask(store, "Which company reported the highest revenue for fiscal 2023?", NO_SCOPE)
    assert open_question.implicit_scope == () and open_question.trace is not None
    assert len(set(open_question.trace.store_document_ids)) > len(own)


def test_a_report_naming_another_company_as_customer_is_not_that_companys(store: Store) -> None:
    corvane = store.document_ids_for(["corvane/annual-2023.txt"])[0]
    assert "Halcyon" in store.catalog.documents[corvane].summary
    done = _ask(store, "Who is Halcyon's largest customer and what was its fiscal 2023 net income?", NO_SCOPE)
    assert done.trace is not None
    assert corvane not in {c.document_id for sq in done.trace.sub_questions for c in sq.chunks}
    # the same report in Corvane's scope, asked about Halcyon: a note saying whose it is
    corvane_scope = _ask(
        store, "What was Halcyon's total revenue for fiscal 2023?", resolve_scope(store, None, "corvane")
    )
    assert corvane_scope.scope_note is not None and corvane_scope.scope_note.kind == "other_entity"
    assert corvane_scope.answer.startswith("The selected documents are about Corvane Textiles Corporation, not Halcyon")
