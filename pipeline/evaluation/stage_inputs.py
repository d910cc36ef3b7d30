"""What each learned stage takes as input when it is optimised alone, built from the labels and the
store with no LM call: the sub-questions, the guarded retrieval's chunks, the chunks on gold pages,
and the answer's context (gold chunks plus retrieved distractors).

Retrieval here is the program's own (pipeline.execution.rounds.QuestionRetrieval, the plan from
pipeline.intake.planner) on a fixed clock, so the same labels always give the same inputs.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.errors import ExperimentConfigError
from pipeline.evaluation.examples import LabelledExample
from pipeline.evaluation.labels import ResolvedExample
from pipeline.evaluation.metrics import fact_present
from pipeline.evaluation.stage_metrics import Stage
from pipeline.execution.rounds import QuestionRetrieval, SubQuestionRetrieval
from pipeline.intake.planner import plan_in_scope
from pipeline.intake.planner_state import PlannerState
from pipeline.intake.scope import QuestionScope
from pipeline.settings import CoreConfig
from pipeline.store import Store
from pipeline.types import Chunk, ChunkHit

# Gold chunks put into the answer's context; the rest of chunks_k are retrieved distractors.
MAX_GOLD_CHUNKS = 3
# The label a stage cannot be scored without, per stage (what an error names).
REQUIRED_LABEL: dict[Stage, str] = {"decompose": "gold_documents", "score": "gold_pages", "answer": "answer_facts"}


@dataclass(frozen=True)
class StageExample:
    """One labelled example with the inputs every stage takes, derived from its labels."""

    resolved: ResolvedExample
    sub_questions: tuple[str, ...]
    retrieval: tuple[SubQuestionRetrieval, ...]
    gold_rows: frozenset[int]
    context: tuple[ChunkHit, ...]

    @property
    def example(self) -> LabelledExample:
        return self.resolved.example


def fixed_clock() -> float:
    """A clock that never moves: stage inputs do not depend on how busy the machine is."""
    return 0.0


def plan_for(store: Store, resolved: ResolvedExample, core: CoreConfig) -> tuple[PlannerState, QuestionScope]:
    """The plan the program makes for the example's question and scope, and the documents it may read."""
    doc_types = frozenset(d.doc_type for d in store.catalog.documents.values())
    _, plan, scoped = plan_in_scope(resolved.example.question, resolved.scope, store, doc_types, core.planner)
    return plan, scoped


def retrieve_all(
    store: Store, scope: QuestionScope, plan: PlannerState, sub_questions: Sequence[str], core: CoreConfig
) -> list[SubQuestionRetrieval]:
    """The guarded retrieval of each sub-question through one QuestionRetrieval (as the program runs it)."""
    retrieval = QuestionRetrieval(store, scope, plan, core, clock=fixed_clock)
    return [retrieval.retrieve(sq) for sq in sub_questions]


def gold_chunk_rows(
    store: Store, resolved: ResolvedExample, cache: dict[tuple[str, ...], Any] | None = None
) -> frozenset[int]:
    """Rows of the chunks on gold pages; for a gold document without page labels, its chunks stating most facts.

    `cache` (any dict, shared across calls on one store) keeps each document's chunks and whether a fact stands in
    a chunk: examples of one question in several scope cases share both, and reading a filing's figures is slow."""
    catalog = store.catalog
    units = catalog.vocabulary.unit_words
    facts = resolved.example.answer_facts
    memo: dict[tuple[str, ...], Any] = {} if cache is None else cache
    rows: set[int] = set()
    for document, pages in sorted(resolved.gold_pages.items()):
        key = ("chunks", document)
        if key not in memo:
            memo[key] = catalog.chunks([int(row) for row in catalog.rows_for_documents([document])])
        chunks = memo[key]
        if pages is not None:
            rows.update(c.row for c in chunks if c.page in pages)
            continue

        def present(fact: str, chunk: Chunk) -> bool:
            found = ("fact", fact, str(chunk.row))
            if found not in memo:
                memo[found] = fact_present(fact, chunk.text, units)
            return bool(memo[found])

        stating = sorted(((sum(present(f, c) for f in facts), c.row) for c in chunks), key=lambda t: (-t[0], t[1]))
        rows.update(row for count, row in stating[:MAX_GOLD_CHUNKS] if count > 0)
    return frozenset(rows)


def needs_gold_rows(stage: Stage, example: LabelledExample) -> bool:
    """Whether `missing_label` reads the example's gold chunk rows for `stage` (else they need not be found)."""
    if stage == "score":
        return True
    return stage == "answer" and not example.expect_not_found and bool(example.answer_facts)


def answer_context(
    store: Store, resolved: ResolvedExample, gold_rows: frozenset[int], retrieved: Sequence[ChunkHit], size: int
) -> tuple[ChunkHit, ...]:
    """Up to MAX_GOLD_CHUNKS gold chunks plus retrieved non-gold chunks, `size` in all, in a seeded order."""
    catalog = store.catalog
    gold = [
        ChunkHit(chunk=c, filename=catalog.documents[c.document_id].filename, score=0.0)
        for c in catalog.chunks(sorted(gold_rows)[:MAX_GOLD_CHUNKS])
    ]
    distractors = [h for h in retrieved if h.chunk.row not in gold_rows][: max(0, size - len(gold))]
    context = gold + distractors
    random.Random(resolved.example.id).shuffle(context)
    return tuple(context)


def stage_example(
    store: Store, resolved: ResolvedExample, gold_rows: frozenset[int] | None = None, core: CoreConfig | None = None
) -> StageExample:
    """The example's stage inputs: labelled sub-questions (else the question), their retrieval, gold rows, context."""
    core = core or CoreConfig()
    view = dataclasses.replace(store, call_log=[])
    example = resolved.example
    plan, scoped = plan_for(view, resolved, core)
    sub_questions = tuple(example.gold_sub_questions) or (plan.goal,)
    retrieval = retrieve_all(view, scoped, plan, sub_questions, core)
    gold_rows = gold_chunk_rows(view, resolved) if gold_rows is None else gold_rows
    question_chunks = retrieve_all(view, scoped, plan, [plan.goal], core)[0].chunks
    context = answer_context(view, resolved, gold_rows, question_chunks, core.chunks_k)
    return StageExample(resolved, sub_questions, tuple(retrieval), gold_rows, context)


def missing_label(stage: Stage, example: LabelledExample, gold_rows: frozenset[int]) -> str | None:
    """The label field `stage` needs and this example lacks (None when it can be scored).

    decompose: gold documents; score: chunks on gold pages (`gold_rows`); answer: answer facts and
    their chunks, or an example that expects 'not found'.
    """
    if stage == "decompose":
        return None if example.gold_documents else REQUIRED_LABEL[stage]
    if stage == "score":
        return None if gold_rows else REQUIRED_LABEL[stage]
    if example.expect_not_found:
        return None
    return None if example.answer_facts and gold_rows else REQUIRED_LABEL[stage]


def labelled_for(
    stage: Stage, examples: Sequence[LabelledExample], gold_rows: Sequence[frozenset[int]], needed: int, file: str
) -> list[int]:
    """Indices of the examples `stage` can score; ExperimentConfigError naming the file and field when fewer
    than `needed` are."""
    usable = [
        i for i, (e, rows) in enumerate(zip(examples, gold_rows, strict=True)) if missing_label(stage, e, rows) is None
    ]
    if len(usable) < needed:
        field = REQUIRED_LABEL[stage]
        raise ExperimentConfigError(
            file,
            f"stage {stage} needs {needed} examples labelled with {field}, but only {len(usable)} of "
            f"{len(examples)} are: label {field} in more examples or lower the data size",
            field,
        )
    return usable
