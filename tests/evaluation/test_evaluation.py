"""Evaluation on the demo corpus: retrieval-only and full runs with a scripted LM."""

from __future__ import annotations

import json

import dspy
import pytest

from pipeline.errors import UnknownDocumentError, UnknownScopeError
from pipeline.evaluation.examples import ExpectedValue, GoldPage, LabelledExample, make_example
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.scoring import ExampleResult, evaluate, score_prediction
from pipeline.evaluation.tables import per_case_table, results_frame
from pipeline.program.events import Completed
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from pipeline.types import SourceRef
from pipeline.values.typed import TypedValue
from tests.support.fakes import cooperative, scripted_lm


def _examples() -> list[LabelledExample]:
    return [
        make_example(
            corpus="demo",
            case="property",
            question="What is the monthly rent?",
            scope={"property": "banda-lane"},
            gold_documents=("banda-lane/lease.pdf",),
            forbidden_documents=("banda-road/lease.md",),
        ),
        make_example(
            corpus="demo",
            case="chip",
            question="Who is the tenant?",
            scope={"document_ids": ["banda-road/lease.md"]},
            gold_documents=("banda-road/lease.md",),
        ),
        make_example(
            corpus="demo",
            case="wrong_property",
            question="Summarise the Banda Lane offer letter",
            forbidden_documents=("banda-lane/offer-letter-banda-lane-copy.pdf", "banda-road/lease.md"),
            gold_documents=("banda-lane/offer-letter.pdf",),
        ),
        make_example(
            corpus="demo",
            case="no_scope",
            question="Which firm valued Dik Dik Lane?",
            gold_documents=("dik-dik-lane/valuation.md",),
        ),
    ]


def test_resolve_maps_paths_and_slugs_to_ids(demo_store: Store) -> None:
    resolved = resolve_example(_examples()[0], demo_store)
    assert resolved.scope.kind == "property"
    assert {demo_store.catalog.documents[d].relpath for d in resolved.gold} == {"banda-lane/lease.pdf"}
    bad = make_example(corpus="demo", case="no_scope", question="q", gold_documents=("nope.md",))
    with pytest.raises(UnknownScopeError, match=r"nope\.md"):
        resolve_example(bad, demo_store)


def test_examples_may_name_documents_by_path_or_by_id(demo_store: Store) -> None:
    lease = next(d for d in demo_store.catalog.documents.values() if d.relpath == "banda-road/lease.md")
    by_id = make_example(
        corpus="demo",
        case="chip",
        question="Who is the tenant?",
        scope={"document_ids": [lease.document_id]},
        gold_documents=("banda-road/lease.md",),
        gold_pages=({"document": lease.document_id, "page": 1},),
    )
    resolved = resolve_example(by_id, demo_store)
    assert resolved.scope.document_ids == (lease.document_id,)
    assert resolved.gold == {lease.document_id} and resolved.gold_pages == {lease.document_id: frozenset({1})}
    # A reference that is neither says which forms are accepted, with one of each from the catalog.
    bad = make_example(corpus="demo", case="no_scope", question="q", gold_documents=("2023 Q3 AAPL",))
    with pytest.raises(UnknownDocumentError) as raised:
        resolve_example(bad, demo_store)
    message = str(raised.value)
    assert "'2023 Q3 AAPL'" in message and f"example {bad.id}" in message
    assert "document id (a canonical UUID" in message and "path relative to the corpus folder" in message


def test_retrieval_only_wrong_property_examples_are_left_out_of_the_composite(demo_store: Store) -> None:
    not_in_scope = make_example(
        corpus="demo",
        case="wrong_property",
        question="What is the monthly rent at Banda Road?",
        scope={"property": "banda-lane"},
        forbidden_documents=("banda-road/lease.md",),
        expect_not_found=True,
    )
    with dspy.context(lm=None):
        results = evaluate([*_examples(), not_in_scope], demo_store, mode="hybrid")
    wrong = results[-1]
    assert wrong.scores.gates_passed and wrong.scores.recall_at_10 is None and wrong.composite is None
    table = per_case_table(results_frame(results))
    # Of the two wrong-property examples only the one with a gold document has a composite: the
    # case's mean is that one's, not halved by a 0 for the other.
    assert table.loc["wrong_property", "composite"] == pytest.approx(results[2].composite)
    scored = [r.composite for r in results if r.composite is not None]
    assert table.loc["all", "composite"] == pytest.approx(round(sum(scored) / len(scored), 4))


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_retrieval_only_scores_without_any_lm(demo_store: Store, mode: str) -> None:
    with dspy.context(lm=None):
        results = evaluate(_examples(), demo_store, mode=mode)  # type: ignore[arg-type]
    frame = results_frame(results)
    assert list(frame["case"]) == ["property", "chip", "wrong_property", "no_scope"]
    assert frame["invalid_ids"].sum() == 0 and frame["wrong_property_citations"].sum() == 0
    assert (frame["lm_calls"] == 0).all()
    chip = results[1]
    assert chip.scores.recall_at_5 == 1.0  # the chip is the gold document itself
    table = per_case_table(frame)
    assert set(table.index) == {"property", "chip", "wrong_property", "no_scope", "all"}
    assert table.loc["all", "n"] == 4


def test_full_evaluation_counts_calls_and_cites_in_scope(demo_store: Store) -> None:
    with dspy.context(lm=scripted_lm(cooperative())):
        results = evaluate(_examples(), demo_store, program=ScopedQA(demo_store), threads=2)
    frame = results_frame(results)
    assert (frame["lm_calls"] == 3).all()
    assert frame["wrong_property_citations"].sum() == 0 and frame["invalid_ids"].sum() == 0
    assert all(r.error is None for r in results)
    assert results[1].scores.citation_recall == 1.0


def test_a_forbidden_citation_fails_the_hard_gate(demo_store: Store) -> None:
    # Label the cited document forbidden: the example must score 0 and be listed as failed.
    chip = _examples()[1]
    poisoned = chip.model_copy(update={"gold_documents": (), "forbidden_documents": ("banda-road/lease.md",)})
    with dspy.context(lm=scripted_lm(cooperative())):
        (result,) = evaluate([poisoned], demo_store, program=ScopedQA(demo_store))
    assert result.scores.wrong_property_citations == 1
    assert result.composite == 0.0 and result.failed


def _rent(expected: ExpectedValue) -> LabelledExample:
    return make_example(
        corpus="demo",
        case="property",
        question="What is the monthly rent?",
        scope={"property": "banda-lane"},
        gold_documents=("banda-lane/lease.pdf",),
        gold_pages=(GoldPage(document="banda-lane/lease.pdf", page=1),),
        forbidden_documents=("banda-road/lease.md",),
        expected_value=expected,
    )


def test_an_answer_without_a_typed_value_is_scored_wrong_not_skipped(demo_store: Store) -> None:
    example = _rent(ExpectedValue(kind="number", value=285000))
    resolved = resolve_example(example, demo_store)
    with dspy.context(lm=scripted_lm(cooperative())):
        events = list(ScopedQA(demo_store).stream(example.question, resolved.scope))
    done = events[-1]
    assert isinstance(done, Completed) and done.trace is not None
    bare = tuple(s.model_copy(update={"value": None}) for s in done.sections)
    result = score_prediction(demo_store, resolved, answer=done.answer, sections=bare, trace=done.trace, value=None)
    scores = result.scores
    assert (scores.value_correct, scores.number_correct, scores.false_absent) == (0.0, 0.0, 1.0)
    assert scores.page_reference == 0.0 and scores.gold_page_cited == 0.0 and scores.boolean_true is None
    assert result.failed
    table = per_case_table(results_frame([result]))
    assert table.loc["all", "value_correct"] == 0.0 and table.loc["all", "page_reference"] == 0.0


def test_a_typed_value_is_scored_with_the_pages_it_cites(demo_store: Store) -> None:
    example = _rent(ExpectedValue(kind="number", value=285000))
    resolved = resolve_example(example, demo_store)
    with dspy.context(lm=scripted_lm(cooperative())):
        *_, done = ScopedQA(demo_store).stream(example.question, resolved.scope)
    assert isinstance(done, Completed)
    (lease,) = resolved.gold

    def scored(value: TypedValue) -> ExampleResult:
        return score_prediction(
            demo_store, resolved, answer=done.answer, sections=done.sections, trace=done.trace, value=value
        )

    right = scored(TypedValue(kind="number", value=285000, pages=(SourceRef(document_id=lease, filename="l", page=1),)))
    assert (right.scores.value_correct, right.scores.page_reference, right.scores.false_absent) == (1.0, 1.0, 0.0)
    assert json.loads(results_frame([right]).loc[0, "typed_value"])["value"] == 285000
    wrong = scored(TypedValue(kind="number", value=12, pages=(SourceRef(document_id=lease, filename="l", page=2),)))
    assert wrong.scores.value_correct == 0.0 and wrong.scores.page_reference == -0.25 and wrong.failed
