"""A literal term found in every document (a form name in every footer) names the documents' kind:
it neither ranks chunks first nor makes a search of its own; a term of one document still does."""

from __future__ import annotations

import pytest

from pipeline.execution.rounds import QuestionRetrieval
from pipeline.intake.planner import analyse_and_plan
from pipeline.intake.scope import NO_SCOPE, question_scope
from pipeline.settings import CoreConfig
from pipeline.store import Store
from tests.support.stores import RecordingStore, store_of

COVER = "Form 7-K quarterly report. This form 7-K is filed each quarter; see the 7-K instructions."
PENALTY = "Late payment penalties: a penalty of five percent applies to every late payment."


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    files = {}
    for name in ("north", "south", "east"):
        extra = "\f Reference ZX-99 covers the penalty appeal." if name == "east" else ""
        files[f"{name}.txt"] = f"{COVER}\f{name.title()} office. {PENALTY} Form 7-K page 2.{extra}"
    return store_of(tmp_path_factory.mktemp("generic"), files)


def _retrieve(store: Store, question: str) -> tuple[RecordingStore, list[str]]:
    spy = RecordingStore(store)
    config = CoreConfig(chunks_k=6)
    _, plan = analyse_and_plan(
        question, NO_SCOPE, store.catalog.entities, {"document"}, config.planner, vocabulary=store.catalog.vocabulary
    )
    chunks = QuestionRetrieval(spy, question_scope(NO_SCOPE, spy), plan, config).retrieve(plan.goal).chunks
    return spy, [h.chunk.text for h in chunks]


def test_a_term_in_every_document_is_told_from_a_term_of_one(store: Store) -> None:
    assert store.in_every_document("7-K") and store.in_every_document("penalty")
    assert not store.in_every_document("ZX-99") and not store.in_every_document("absent")


def test_a_form_name_neither_searches_alone_nor_ranks_its_chunks_first(store: Store) -> None:
    spy, texts = _retrieve(store, "What does the 7-K say about late payment penalties?")
    assert "7-K" not in {c["query"] for c in spy.calls}
    assert texts and "penalt" in texts[0].lower() and "quarterly report" not in texts[0]


def test_a_term_of_one_document_still_searches_and_ranks_first(store: Store) -> None:
    spy, texts = _retrieve(store, "What does the 7-K say about ZX-99?")
    assert "7-K ZX-99" in {c["query"] for c in spy.calls}  # the literal search runs with its distinctive term
    assert texts and "ZX-99" in texts[0]


def test_a_corpus_of_one_document_has_no_terms_in_every_document(tmp_path_factory: pytest.TempPathFactory) -> None:
    assert not store_of(tmp_path_factory.mktemp("single"), {"only.txt": COVER}).in_every_document("7-K")
