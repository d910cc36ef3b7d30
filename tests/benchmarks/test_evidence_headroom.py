"""benchmarks/evidence_headroom.py: where the gold fact of a wrong answer is (a kept chunk, a retrieved one not
kept, none), read on the demo index's real chunks, and every answerable example counted once."""

from __future__ import annotations

from types import ModuleType

import pytest

from pipeline.evaluation.examples import LabelledExample, load_example_set
from pipeline.program.trace import QuestionTrace, RetrievedChunk, SubQuestionTrace
from pipeline.store import Store
from tests.support.paths import ROOT
from tests.support.scripts import load_benchmark


@pytest.fixture(scope="module")
def headroom() -> ModuleType:
    return load_benchmark("evidence_headroom")


def _trace(store: Store, kept: list[int], dropped: list[int]) -> QuestionTrace:
    def chunk(row: int, keep: bool) -> RetrievedChunk:
        found = store.catalog.chunks([row])[0]
        return RetrievedChunk(
            document_id=found.document_id, filename="f", page=1, row=row, retrieval_score=1.0, kept=keep
        )

    chunks = [chunk(r, True) for r in kept] + [chunk(r, False) for r in dropped]
    section = SubQuestionTrace(index=0, sub_question="q", chunks=chunks)
    return QuestionTrace(question="q", scope={}, sub_questions=[section])


def test_a_fact_is_placed_where_the_questions_chunks_hold_it(headroom: ModuleType, demo_store: Store) -> None:
    rows = [int(r) for r in demo_store.catalog.rows_for_documents(list(demo_store.catalog.documents))]
    texts = {r: c.text for r, c in zip(rows, demo_store.catalog.chunks(rows), strict=True)}
    holding = next(r for r, t in texts.items() if "285,000" in t)
    other = next(r for r, t in texts.items() if "285,000" not in t)
    labelled = load_example_set(ROOT / "datasets" / "demo-traces", "test", ["no_scope"])[0]
    example: LabelledExample = labelled.model_copy(update={"answer_facts": ("KSH 285,000",)})
    assert headroom.place(example, _trace(demo_store, [holding], [other]), demo_store) == "kept"
    assert headroom.place(example, _trace(demo_store, [other], [holding]), demo_store) == "retrieved"
    assert headroom.place(example, _trace(demo_store, [other], []), demo_store) == "missed"
    # a fact that is a date alone is no evidence: every table header states one
    dated = example.model_copy(update={"answer_facts": ("March 1, 2023",)})
    assert headroom.place(dated, _trace(demo_store, [holding], []), demo_store) == "missed"


def test_every_answerable_example_is_counted_once_and_right_answers_as_right(
    headroom: ModuleType, demo_store: Store
) -> None:
    examples = [
        e
        for e in load_example_set(ROOT / "datasets" / "demo-traces", "test", ["property"])
        if e.answer_facts and not e.expect_not_found
    ][:6]
    counts = headroom.classify(examples, demo_store)
    assert sum(counts.values()) == len(examples) == 6
    assert {q for _, q in counts} <= set(headroom.PLACES)
    assert counts[("property", "right")] >= 1  # the shipped program answers the demo's rent and tenant questions
