"""Scoring one stage's output on one example: the stage metrics of pipeline.evaluation.stage_metrics
applied to what the step produced, with the safety gates of the end-to-end metric."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.evaluation.metrics import (
    invalid_store_ids,
    reader_metrics,
    sub_question_coverage,
    wrong_property_citations,
)
from pipeline.evaluation.scoring import read_sections
from pipeline.evaluation.stage_inputs import StageExample
from pipeline.evaluation.stage_metrics import (
    STAGE_WEIGHTS,
    StageScores,
    document_recall_at_k,
    kept_precision_recall,
    page_recall_at_k,
)
from pipeline.execution.rounds import SubQuestionRetrieval
from pipeline.intake.scope import question_scope
from pipeline.program.events import Section
from pipeline.store import Store
from pipeline.types import ChunkHit


def score_decomposition(
    store: Store,
    item: StageExample,
    sub_questions: Sequence[str],
    retrieval: Sequence[SubQuestionRetrieval],
    sent_ids: Sequence[str],
) -> StageScores:
    """Recall@10 of gold documents and pages over the sub-questions' retrieval, and sub-question coverage."""
    resolved = item.resolved
    documents = [[h.chunk.document_id for h in r.chunks] for r in retrieval]
    pages = [[(h.chunk.document_id, h.chunk.page) for h in r.chunks] for r in retrieval]
    allowed = question_scope(resolved.scope, store).allowed
    shown = {d for ranking in documents for d in ranking}
    return StageScores(
        stage="decompose",
        metrics={
            "document_recall": document_recall_at_k(documents, resolved.gold),
            "page_recall": page_recall_at_k(pages, resolved.gold_pages),
            "sub_question_coverage": sub_question_coverage(list(sub_questions), item.example.gold_sub_questions),
        },
        wrong_property=wrong_property_citations(shown, resolved.forbidden, allowed),
        invalid_ids=invalid_store_ids(sent_ids, store.catalog.documents.keys(), allowed),
        details={"sub_questions": float(len(sub_questions))},
    )


def score_kept(store: Store, item: StageExample, kept: Sequence[Sequence[ChunkHit]]) -> StageScores:
    """Precision/recall (F1) of the kept chunks against the chunks on gold pages, over every group shown."""
    resolved = item.resolved
    shown = [h.chunk.row for r in item.retrieval for h in r.chunks]
    kept_rows = [h.chunk.row for group in kept for h in group]
    allowed = question_scope(resolved.scope, store).allowed
    kept_docs = {h.chunk.document_id for group in kept for h in group}
    measured = kept_precision_recall(kept_rows, shown, item.gold_rows)
    return StageScores(
        stage="score",
        metrics={"kept_f1": measured["kept_f1"], "dropped_share": measured["dropped_share"]},
        wrong_property=wrong_property_citations(kept_docs, resolved.forbidden, allowed),
        details={
            "kept_precision": measured["kept_precision"],
            "kept_recall": measured["kept_recall"],
            "kept": float(len(set(kept_rows))),
            "shown": float(len(set(shown))),
        },
    )


def score_sections(store: Store, item: StageExample, sections: Sequence[Section]) -> StageScores:
    """What a reader gets from the guarded answer sections (reader_metrics), with the safety gate."""
    resolved = item.resolved
    example = item.example
    cited_docs = {s.document_id for section in sections for s in section.sources}
    allowed = question_scope(resolved.scope, store).allowed
    units = store.catalog.vocabulary.unit_words
    reader = reader_metrics(
        read_sections(sections),
        example.answer_facts,
        resolved.gold_pages,
        example.expect_not_found,
        units,
        example.answer_spans,
    )
    return StageScores(
        stage="answer",
        metrics={name: reader[name] for name in STAGE_WEIGHTS["answer"]},
        wrong_property=wrong_property_citations(cited_docs, resolved.forbidden, allowed),
        details={
            name: reader[name]
            for name in (
                "line_fact_recall",
                "words_per_section",
                "quotes_per_section",
                "abstained_when_absent",
                "false_abstention",
            )
        },
    )
