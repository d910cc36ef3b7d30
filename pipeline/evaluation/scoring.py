"""Scoring the program (or its retrieval alone) on labelled examples, one example at a time or many."""

from __future__ import annotations

import copy
import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.errors import LMFailure, ScopeRagError, SkippedDocumentError
from pipeline.evaluation.examples import LabelledExample
from pipeline.evaluation.labels import ResolvedExample, resolve_example
from pipeline.evaluation.metrics import (
    DEFAULT_WEIGHTS,
    ExampleScores,
    ReadSection,
    citation_precision,
    citation_recall,
    composite,
    invalid_store_ids,
    page_recall_at_k,
    reader_metrics,
    recall_at_k,
    scope_note_correct,
    sub_question_coverage,
    wrong_property_citations,
)

# re-exported: the stage evaluations (optimizers.stages) map their examples the same way
from pipeline.evaluation.parallel import Progress as Progress
from pipeline.evaluation.parallel import map_in_context as map_in_context
from pipeline.evaluation.value_metrics import (
    answer_value,
    cited_pages,
    computed_strict,
    gold_page_cited,
    page_reference,
    value_metrics,
)
from pipeline.execution.rounds import QuestionRetrieval
from pipeline.intake.planner import plan_in_scope, plan_scope_note
from pipeline.intake.scope import question_scope
from pipeline.program.calls import StopSignal
from pipeline.program.events import Completed, Failed
from pipeline.program.trace import QuestionTrace
from pipeline.settings import CoreConfig
from pipeline.store import Store
from pipeline.types import SearchMode
from pipeline.values.typed import TypedValue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExampleResult:
    """The outcome of one example: its scores, composite (None: no weighted metric applies) and
    what the answer cited."""

    example: LabelledExample
    scores: ExampleScores
    composite: float | None
    answer: str = ""
    cited: tuple[str, ...] = ()
    error: str | None = None
    # What the score leaves out and why (a labelled document the index build skipped).
    notes: tuple[str, ...] = ()
    # The answer's typed value as scored (pipeline.evaluation.value_metrics.answer_value); None: it gave none.
    value: TypedValue | None = None
    # Wall-clock seconds the program took to answer (None: retrieval alone, or no answer).
    seconds: float | None = None

    @property
    def failed(self) -> bool:
        """Gate failures, errors, wrong abstention, an answerable example whose answer lines state no fact, or a
        typed value that is not the expected one."""
        s = self.scores
        return (
            self.error is not None
            or not s.gates_passed
            or s.abstention < 1.0
            or s.scope_note == 0.0
            or s.answer_line_correct == 0.0
            or s.value_correct == 0.0
        )


def _isolated(store: Store) -> Store:
    """The same indexes with a call log of its own (examples may run in parallel)."""
    return dataclasses.replace(store, call_log=[])


def score_retrieval(
    store: Store,
    resolved: ResolvedExample,
    mode: SearchMode | None = None,
    k: int = 10,
    core: CoreConfig | None = None,
) -> ExampleResult:
    """Retrieval and guards only, no LM: the program's plan and rounds (pipeline.execution.rounds)
    with the question itself as the one sub-question and no HyDE passage, top k chunks. `mode`
    overrides the retrievers the plan's rounds name (None: as planned)."""
    view = _isolated(store)
    example = resolved.example
    config = (core or CoreConfig()).model_copy(update={"chunks_k": k})
    doc_types = frozenset(d.doc_type for d in view.catalog.documents.values())
    _, plan, scoped = plan_in_scope(example.question, resolved.scope, view, doc_types, config.planner)
    retrieval = QuestionRetrieval(view, scoped, plan, config, mode=mode)
    chunks = retrieval.retrieve(plan.goal).chunks
    note = plan_scope_note(plan, scoped, view)
    # as the program answers: a selection of another entity's documents the gate read after all has no note
    given = None if note is None or (note.kind == "other_entity" and chunks) else note.kind
    ranked = [hit.chunk.document_id for hit in chunks]
    pages = [(hit.chunk.document_id, hit.chunk.page) for hit in chunks]
    shown = set(ranked)
    # The safety metrics check against the scope as given, derived apart from the program's.
    allowed = question_scope(resolved.scope, view).allowed
    scores = ExampleScores(
        wrong_property_citations=wrong_property_citations(shown, resolved.forbidden, allowed),
        invalid_ids=invalid_store_ids(_sent_ids(view), view.catalog.documents.keys(), allowed),
        recall_at_5=recall_at_k(ranked, resolved.gold, 5),
        recall_at_10=recall_at_k(ranked, resolved.gold, 10),
        sub_question_coverage=None,
        citation_precision=None,
        citation_recall=None,
        fact_recall=None,
        abstention=1.0,
        lm_calls=0,
        tokens=0,
        page_recall_at_5=page_recall_at_k(pages, resolved.gold_pages, 5),
        page_recall_at_10=page_recall_at_k(pages, resolved.gold_pages, 10),
        scope_note=scope_note_correct(example.expect_scope_note, given),
    )
    return ExampleResult(example, scores, composite(scores, {"recall_at_10": 1.0}), cited=tuple(sorted(shown)))


def _sent_ids(view: Store) -> list[str]:
    """Every document id the view's store calls received, in call order."""
    return [d for call in (view.call_log or []) for d in (call.document_ids or ())]


def score_answer(
    program: Any, store: Store, resolved: ResolvedExample, weights: Mapping[str, float] | None = None
) -> ExampleResult:
    """Run the program on one example and score everything (LM calls included)."""
    view = _isolated(store)
    runner = copy.copy(program)
    runner.store = view
    example = resolved.example
    last = None
    started = time.perf_counter()
    for event in runner.stream(example.question, resolved.scope):
        last = event
    seconds = time.perf_counter() - started
    if not isinstance(last, Completed | Failed) or last.trace is None:
        raise LMFailure("the program ended without an answer")
    result = score_prediction(
        view,
        resolved,
        answer=last.answer if isinstance(last, Completed) else "",
        sections=last.sections if isinstance(last, Completed) else (),
        value=last.value if isinstance(last, Completed) else None,
        trace=last.trace,
        error=last.message if isinstance(last, Failed) else None,
        sent_ids=_sent_ids(view),
        weights=weights,
    )
    return dataclasses.replace(result, seconds=round(seconds, 4))


def score_prediction(
    store: Store,
    resolved: ResolvedExample,
    *,
    answer: str,
    sections: Sequence[Any],
    trace: QuestionTrace,
    value: TypedValue | None = None,
    error: str | None = None,
    sent_ids: Sequence[str] | None = None,
    weights: Mapping[str, float] | None = None,
) -> ExampleResult:
    """Every metric of an answer the program already gave (no LM call).

    `sections` are the answer's `Section`s (their `sources` are what was cited, their `value`s what each
    part's typed value cites); `value` is the whole answer's typed value (`Completed.value`); `sent_ids`
    are the document ids that reached the store, by default those the program recorded in `trace`.
    """
    example = resolved.example
    cited_pairs = [(s.document_id, s.page) for section in sections for s in section.sources]
    cited_docs = {d for d, _ in cited_pairs}
    units = store.catalog.vocabulary.unit_words
    reader = reader_metrics(
        read_sections(sections),
        example.answer_facts,
        resolved.gold_pages,
        example.expect_not_found,
        units,
        example.answer_spans,
    )
    abstention = float(reader.pop("abstention") or 0.0)
    chosen = answer_value(value, [s.value for s in sections])
    typed = typed_scores(example, resolved.gold_pages, value, sections, answer, reader["answer_line_correct"])
    shown = [c for sq in trace.sub_questions for c in sorted(sq.chunks, key=lambda c: -c.retrieval_score)]
    ranked = [c.document_id for c in shown]
    pages = [(c.document_id, c.page) for c in shown]
    allowed = question_scope(resolved.scope, store).allowed
    sent = trace.store_document_ids if sent_ids is None else sent_ids
    scores = ExampleScores(
        wrong_property_citations=wrong_property_citations(cited_docs, resolved.forbidden, allowed),
        invalid_ids=invalid_store_ids(sent, store.catalog.documents.keys(), allowed),
        recall_at_5=recall_at_k(ranked, resolved.gold, 5),
        recall_at_10=recall_at_k(ranked, resolved.gold, 10),
        sub_question_coverage=sub_question_coverage(
            [sq.sub_question for sq in trace.sub_questions], example.gold_sub_questions
        ),
        citation_precision=None if example.expect_not_found else citation_precision(cited_pairs, resolved.gold_pages),
        citation_recall=citation_recall(cited_docs, resolved.gold),
        lm_calls=trace.lm_calls,
        abstention=abstention,
        tokens=trace.tokens,
        page_recall_at_5=page_recall_at_k(pages, resolved.gold_pages, 5),
        page_recall_at_10=page_recall_at_k(pages, resolved.gold_pages, 10),
        **reader,
        scope_note=scope_note_correct(example.expect_scope_note, noted(trace)),
        **typed,
    )
    return ExampleResult(
        example,
        scores,
        composite(scores, weights or DEFAULT_WEIGHTS),
        answer,
        tuple(sorted(cited_docs)),
        error,
        value=chosen,
    )


def typed_scores(
    example: LabelledExample,
    gold_pages: Mapping[str, frozenset[int] | None],
    value: TypedValue | None,
    sections: Sequence[Any],
    answer: str,
    lenient: float | None,
) -> dict[str, float | None]:
    """The typed-value metrics of an answer (ExampleScores' field names; those that do not apply left out):
    against the example's expected value, when it has one, and, for a computed figure (tag `computed`, one
    answer fact), the strict matcher beside the lenient one (`lenient`: answer_line_correct)."""
    out: dict[str, float | None] = {}
    parts = [s.value for s in sections]
    chosen = answer_value(value, parts)
    expected = example.expected_value
    if expected is not None:
        notes = [v.note for v in (chosen, *parts) if v is not None and v.note]
        out.update(value_metrics(expected, chosen, " ".join([*notes, answer])))
        cited = cited_pages(chosen, parts)
        out["page_reference"] = page_reference(cited, gold_pages)
        out["gold_page_cited"] = gold_page_cited(cited, gold_pages)
    if "computed" in example.tags and len(example.answer_facts) == 1:
        lines = [s.answer for s in sections if s.status == "answered"]
        out["computed_strict"] = computed_strict(example.answer_facts[0], chosen, lines)
        out["computed_lenient"] = lenient
    return out


def read_sections(sections: Sequence[Any]) -> list[ReadSection]:
    """What a reader reads of the answer's `Section`s (pipeline.program.events)."""
    return [
        ReadSection(
            answer=s.answer,
            evidence=tuple((e.text, e.source.document_id, e.source.page) for e in s.evidence),
            found=s.status == "answered",
        )
        for s in sections
    ]


def noted(trace: QuestionTrace) -> str | None:
    """The kind of the scope note the answer carried, as its trace records it (None: no note)."""
    kinds = ("other_entity", "no_entity")
    return next((i.target for i in trace.interventions if i.guard == "scope" and i.target in kinds), None)


def evaluate(
    examples: Sequence[LabelledExample],
    store: Store,
    *,
    program: Any | None = None,
    mode: SearchMode = "hybrid",
    threads: int = 1,
    progress: Progress | None = None,
    weights: Mapping[str, float] | None = None,
    core: CoreConfig | None = None,
    stop: StopSignal | None = None,
) -> list[ExampleResult]:
    """Every example scored, in input order: the program's answers, or retrieval alone when no program
    (with `core`'s retrieval settings; a program runs with its own). Once `stop` is requested, WorkStopped
    carries the examples finished (pipeline.evaluation.parallel)."""
    resolved = [_resolved(e, store) for e in examples]

    def one(item: ResolvedExample | ExampleResult) -> ExampleResult:
        if isinstance(item, ExampleResult):
            return item
        try:
            if program is None:
                result = score_retrieval(store, item, mode, core=core)
            else:
                result = score_answer(program, store, item, weights)
            return dataclasses.replace(result, notes=item.left_out) if item.left_out else result
        except ScopeRagError as exc:
            log.warning("example %s failed: %s", item.example.id, exc)
            return ExampleResult(item.example, _empty_scores(), 0.0, error=str(exc))

    return map_in_context(one, resolved, threads, progress, stop)


def _resolved(example: LabelledExample, store: Store) -> ResolvedExample | ExampleResult:
    """The example resolved, or its failed result when its scope names a document the build skipped."""
    try:
        return resolve_example(example, store)
    except SkippedDocumentError as exc:
        log.warning("example %s failed: %s", example.id, exc)
        return ExampleResult(example, _empty_scores(), 0.0, error=str(exc))


def _empty_scores() -> ExampleScores:
    return ExampleScores(0, 0, None, None, None, None, None, None, 0.0, 0, 0)
