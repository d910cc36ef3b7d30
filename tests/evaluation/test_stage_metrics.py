"""Each stage's own metric (pure functions), the stage inputs built from the labels, and the label checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import ExperimentConfigError
from pipeline.evaluation.examples import make_example
from pipeline.evaluation.labels import resolve_example
from pipeline.evaluation.stage_inputs import gold_chunk_rows, labelled_for, missing_label, stage_example
from pipeline.evaluation.stage_metrics import (
    StageScores,
    document_recall_at_k,
    interleave,
    kept_precision_recall,
    page_recall_at_k,
)
from pipeline.store import Store


def test_interleave_takes_rankings_rank_by_rank_without_repeats() -> None:
    assert interleave([["a", "b", "c"], ["b", "d"], []]) == ["a", "b", "d", "c"]


def test_document_recall_counts_the_first_k_distinct_documents_of_all_sub_questions() -> None:
    rankings = [["a", "a", "x"], ["y", "b"]]  # interleaved: a, y, b, x
    assert document_recall_at_k(rankings, {"a", "b"}, k=10) == 1.0
    assert document_recall_at_k(rankings, {"a", "b"}, k=2) == 0.5  # b is third
    assert document_recall_at_k(rankings, set(), k=10) is None


def test_page_recall_counts_pages_and_whole_documents_without_page_labels() -> None:
    rankings = [[("a", 1), ("a", 2)], [("b", 7)]]
    gold = {"a": frozenset({1, 3}), "b": None}  # 2 pages of a + document b = 3 units
    assert page_recall_at_k(rankings, gold, k=10) == pytest.approx(2 / 3)
    assert page_recall_at_k(rankings, gold, k=1) == pytest.approx(1 / 3)
    assert page_recall_at_k(rankings, {}, k=10) is None


def test_kept_precision_recall_against_gold_rows_among_those_shown() -> None:
    measured = kept_precision_recall(kept=[1, 2], shown=[1, 2, 3, 4], gold=[2, 3, 99])
    assert measured["kept_precision"] == 0.5 and measured["kept_recall"] == 0.5 and measured["kept_f1"] == 0.5
    assert measured["dropped_share"] is None
    nothing_kept = kept_precision_recall(kept=[], shown=[1, 2], gold=[2])
    assert nothing_kept["kept_precision"] == 0.0 and nothing_kept["kept_f1"] == 0.0
    no_gold_shown = kept_precision_recall(kept=[1], shown=[1, 2, 3, 4], gold=[9])
    assert no_gold_shown["kept_f1"] is None and no_gold_shown["dropped_share"] == 0.75
    assert kept_precision_recall(kept=[], shown=[], gold=[1])["dropped_share"] is None


def test_stage_value_is_the_weighted_mean_of_what_applies_and_zero_on_a_gate_failure() -> None:
    scores = StageScores("decompose", {"document_recall": 1.0, "page_recall": 0.5, "sub_question_coverage": None})
    assert scores.value == pytest.approx((0.4 * 1.0 + 0.4 * 0.5) / 0.8)
    answer = StageScores("answer", {"fact_recall": 1.0, "citation_precision": 1.0, "abstention": 1.0}, wrong_property=1)
    assert not answer.gates_passed and answer.value == 0.0
    assert StageScores("score", {}).value == 0.0


def test_stage_inputs_come_from_the_labels_and_the_guarded_retrieval(demo_store: Store) -> None:
    example = make_example(
        corpus="demo",
        case="property",
        question="What is the monthly rent and who is the tenant?",
        scope={"property": "banda-lane"},
        gold_documents=("banda-lane/lease.pdf",),
        gold_pages=({"document": "banda-lane/lease.pdf", "page": 1},),
        answer_facts=("KSH 285,000",),
        gold_sub_questions=("What is the monthly rent?", "Who is the tenant?"),
    )
    resolved = resolve_example(example, demo_store)
    item = stage_example(demo_store, resolved)
    assert item.sub_questions == example.gold_sub_questions
    assert len(item.retrieval) == 2 and all(r.chunks for r in item.retrieval)
    lease = next(iter(resolved.gold))
    gold = demo_store.catalog.chunks(sorted(item.gold_rows))
    assert gold and all(c.document_id == lease and c.page == 1 for c in gold)
    assert {h.chunk.row for h in item.context} >= set(sorted(item.gold_rows)[:3])
    allowed = set(demo_store.entity_document_ids(resolved.scope.entity_id or ""))
    assert {h.chunk.document_id for h in item.context} <= allowed
    assert stage_example(demo_store, resolved) == item  # deterministic


def test_a_gold_document_without_page_labels_contributes_its_chunks_stating_facts(demo_store: Store) -> None:
    example = make_example(
        corpus="demo",
        case="chip",
        question="What is the monthly rent?",
        scope={"document_ids": ("banda-lane/lease.pdf",)},
        gold_documents=("banda-lane/lease.pdf",),
        answer_facts=("KSH 285,000",),
    )
    rows = gold_chunk_rows(demo_store, resolve_example(example, demo_store))
    assert rows and all("285,000" in c.text for c in demo_store.catalog.chunks(sorted(rows)))


def test_missing_labels_are_an_error_naming_the_file_and_field() -> None:
    answerable = make_example(
        corpus="demo", case="no_scope", question="Who is the tenant of Banda Lane?", gold_documents=("a.pdf",)
    )
    not_found = make_example(corpus="demo", case="no_scope", question="Is there parking?", expect_not_found=True)
    assert missing_label("decompose", answerable, frozenset()) is None
    assert missing_label("decompose", not_found, frozenset()) == "gold_documents"
    assert missing_label("score", answerable, frozenset()) == "gold_pages"
    assert missing_label("score", answerable, frozenset({3})) is None
    assert missing_label("answer", answerable, frozenset({3})) == "answer_facts"
    assert missing_label("answer", not_found, frozenset()) is None
    with pytest.raises(ExperimentConfigError) as caught:
        labelled_for("score", [answerable, not_found], [frozenset(), frozenset()], 1, "traces/train.jsonl")
    assert caught.value.file == "traces/train.jsonl" and caught.value.field == "gold_pages"
    assert labelled_for("answer", [answerable, not_found], [frozenset(), frozenset()], 1, str(Path("t"))) == [1]
