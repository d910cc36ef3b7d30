"""The DSPy program: decompose -> per-sub-question retrieval inside the guards -> one scoring
call -> answer -> citation check. `forward()` only wires steps; every decision that is not
the LM's lives in plain functions (scope, executor, relevance, citations)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import dspy

from pipeline.errors import LMFailure
from pipeline.execution.executor import ExecutionResult, execute_steps
from pipeline.execution.steps import scope_steps
from pipeline.guards.citations import MISSING_SECTION, build_section, citation_label
from pipeline.guards.relevance import apply_scores
from pipeline.guards.sanitise import MAX_SUB_QUESTIONS, clean_sub_questions, defuse_field_markers, valid_text
from pipeline.intake.analysis import analyse_question
from pipeline.intake.planner import plan_question, round_weights
from pipeline.intake.planner_state import PlannerState
from pipeline.intake.scope import Scope, allowed_document_ids
from pipeline.program.calls import call_once
from pipeline.program.events import (
    Completed,
    Decomposed,
    Event,
    Failed,
    Filtering,
    GeneratingSubquestion,
    Retrieving,
    Section,
    SourceRef,
    render_markdown,
)
from pipeline.program.trace import Intervention, QuestionTrace, record_call, record_execution, record_section
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.types import ChunkHit
from signatures import Decompose, HyDE, ScoreRelevance, SectionedAnswer
from signatures.shapes import exact_scores_type, exact_sections_type
from signatures.types import AnswerSection, ChunkForScoring, ScoringGroup, SectionContext, SourceChunk

log = logging.getLogger(__name__)

__all__ = ["MAX_BULLETS", "MAX_SUB_QUESTIONS", "RetrievalContext", "ScopedQA"]

MAX_BULLETS = 5


@dataclass(frozen=True)
class RetrievalContext:
    """What the planner decided for every sub-question's retrieval."""

    mentioned: tuple[str, ...] = ()
    doc_type_hint: frozenset[str] = frozenset()
    weights: dict[str, float] | None = None
    passage: str | None = None

    def with_passage(self, passage: str | None) -> RetrievalContext:
        return RetrievalContext(self.mentioned, self.doc_type_hint, self.weights, passage)


class ScopedQA(dspy.Module):
    """Scoped, sectioned question answering with citations checked against what was shown."""

    def __init__(self, store: Store, settings: Settings | None = None) -> None:
        super().__init__()
        self.store = store
        self.settings = settings or Settings()
        self.decompose = dspy.Predict(Decompose)
        self.score = dspy.Predict(ScoreRelevance)
        self.answer = dspy.Predict(SectionedAnswer)
        self.hyde = dspy.Predict(HyDE)
        self._entities = list(store.catalog.entities.values())
        self._doc_types = frozenset(d.doc_type for d in store.catalog.documents.values())

    def forward(self, question: str, scope: Scope) -> dspy.Prediction:
        last: Event | None = None
        state: dict[str, Any] = {}
        for event in self.stream(question, scope, state):
            last = event
        if isinstance(last, Failed):
            raise LMFailure(last.message)
        if not isinstance(last, Completed):
            raise LMFailure("the program ended without an answer")
        return dspy.Prediction(answer=last.answer, sections=list(last.sections), trace=state["trace"])

    # -- the pipeline as a stream of events -----------------------------------------------

    def stream(self, question: str, scope: Scope, state: dict[str, Any] | None = None) -> Iterator[Event]:
        """Progress events in seed-003 order, ending with `completed` or `error`.

        `state["trace"]` holds the QuestionTrace once the stream ends.
        """
        state = state if state is not None else {}
        question = valid_text(question)  # argv decoded with surrogateescape can carry lone surrogates
        trace = QuestionTrace(question=question, scope=scope.model_dump(mode="json"))
        state["trace"] = trace
        started = time.perf_counter()
        intake = analyse_question(question, self._entities, self._doc_types, self.settings.core.planner)
        plan = plan_question(intake, scope, self.store.catalog.entities, self.settings.core.planner)
        trace.planner = plan.model_dump(mode="json")
        if plan.strategy in ("clarify_then_retrieve", "defer_or_refuse"):
            yield self._without_retrieval(plan, trace, started)
            return
        first_round = plan.retrieval_rounds[0] if plan.retrieval_rounds else None
        retrieval = RetrievalContext(
            mentioned=intake.entity_ids,
            doc_type_hint=intake.doc_type_hint,
            weights=round_weights(first_round) if first_round else None,
        )
        try:
            if first_round is not None and first_round.use_hyde:
                retrieval = retrieval.with_passage(self._hyde(question, trace))
            sub_questions = self._decompose(question, trace)
            yield Decomposed(sub_questions=tuple(sub_questions))
            yield Retrieving()
            groups = [self._retrieve(i, sq, scope, retrieval, trace) for i, sq in enumerate(sub_questions)]
            yield Filtering()
            kept = self._score(sub_questions, groups, trace)
            sections_out: list[Section] = []
            answered = self._generate(question, sub_questions, kept, trace)
            allowed = allowed_document_ids(scope, self.store.entity_document_ids)
            for index, sub_question in enumerate(sub_questions):
                yield GeneratingSubquestion(index=index, sub_question=sub_question)
                sections_out.append(self._section(index, sub_question, kept[index], answered, allowed, trace))
        except LMFailure as exc:
            trace.timings["total"] = time.perf_counter() - started
            trace.fallbacks.append(Intervention(guard="lm", target="call", reason=valid_text(str(exc)[:500])))
            log.warning("language model failed: %s", exc)
            # The event names the failing step and error type only: its text may carry endpoints.
            yield Failed(message=f"language model failed: {exc.public}")
            return
        trace.timings["total"] = time.perf_counter() - started
        answer = render_markdown(sections_out)
        trace.answer = answer
        trace.sections = [s.model_dump(mode="json") for s in sections_out]
        yield Completed(
            answer=answer,
            sections=tuple(sections_out),
            lm_calls=trace.lm_calls,
            tokens=trace.tokens,
            seconds=round(trace.timings["total"], 3),
            strategy=plan.strategy,
        )

    def _without_retrieval(self, plan: PlannerState, trace: QuestionTrace, started: float) -> Completed:
        """The answer when the planner stops before reading: clarify, or refuse."""
        questions = tuple(q.question for q in plan.clarifying_questions)
        if plan.strategy == "clarify_then_retrieve":
            answer = "Before searching, please clarify:\n" + "\n".join(f"- {q}" for q in questions)
        else:
            answer = "This request cannot be answered from the documents under the current safety settings."
        trace.answer = answer
        trace.timings["total"] = time.perf_counter() - started
        return Completed(
            answer=answer,
            sections=(),
            lm_calls=0,
            tokens=0,
            seconds=round(trace.timings["total"], 3),
            strategy=plan.strategy,
            clarifying_questions=questions,
        )

    # -- steps --------------------------------------------------------------------------------

    def _call(self, name: str, predictor: dspy.Predict, trace: QuestionTrace, **inputs: Any) -> dspy.Prediction | None:
        """One LM call, counted with its tokens; None when the output could not be parsed."""
        max_tokens = self.settings.program.max_tokens.get(name, 1024)
        try:
            outcome = call_once(name, predictor, max_tokens, **inputs)
        except LMFailure as exc:
            trace.lm_calls += exc.calls
            raise
        record_call(trace, name, outcome)
        return outcome.prediction

    def _decompose(self, question: str, trace: QuestionTrace) -> list[str]:
        result = self._call("decompose", self.decompose, trace, question=question)
        sub_questions, fell_back = clean_sub_questions(getattr(result, "sub_questions", None), question)
        if fell_back:
            trace.fallbacks.append(
                Intervention(guard="decompose", target="sub_questions", reason="empty: using the question")
            )
        return sub_questions

    def _hyde(self, question: str, trace: QuestionTrace) -> str | None:
        result = self._call("hyde", self.hyde, trace, question=question)
        passage = getattr(result, "passage", None)
        return valid_text(passage.strip()) if isinstance(passage, str) and passage.strip() else None

    def _retrieve(
        self, index: int, sub_question: str, scope: Scope, retrieval: RetrievalContext, trace: QuestionTrace
    ) -> list[ChunkHit]:
        started = time.perf_counter()
        plan = scope_steps(scope, sub_question, self.store.entity_document_ids)
        result: ExecutionResult = execute_steps(
            self.store,
            plan,
            scope,
            mentioned_entity_ids=retrieval.mentioned,
            doc_type_hint=retrieval.doc_type_hint,
            config=self.settings.core,
            weights=retrieval.weights,
            dense_query=retrieval.passage,
        )
        trace.timings["retrieve"] = trace.timings.get("retrieve", 0.0) + time.perf_counter() - started
        record_execution(trace, index, sub_question, result)
        return list(result.chunks)

    def _score(
        self, sub_questions: Sequence[str], groups: list[list[ChunkHit]], trace: QuestionTrace
    ) -> list[list[ChunkHit]]:
        if not any(groups):
            return groups
        payload = [
            ScoringGroup(
                sub_question_index=i,
                sub_question=sq,
                chunks=[
                    ChunkForScoring(chunk_index=j, source=citation_label(h.filename, h.chunk.page), text=self._shown(h))
                    for j, h in enumerate(groups[i])
                ],
            )
            for i, sq in enumerate(sub_questions)
        ]
        sizes = [len(g) for g in groups]
        signature = self.score.signature.with_updated_fields("scores", type_=exact_scores_type(sizes))
        result = self._call("score", self.score, trace, groups=payload, signature=signature)
        verdicts, fallbacks = apply_scores(
            sizes, getattr(result, "scores", None), self.settings.program.relevance_threshold
        )
        for fb in fallbacks:
            trace.fallbacks.append(
                Intervention(
                    guard="score",
                    target=f"sub_question:{fb.sub_question_index}",
                    reason=f"{fb.reason}: {fb.detail}",
                )
            )
        kept: list[list[ChunkHit]] = []
        for verdict, group, sq_trace in zip(verdicts, groups, trace.sub_questions, strict=True):
            for chunk_trace, score, keep in zip(sq_trace.chunks, verdict.scores, verdict.kept, strict=True):
                chunk_trace.relevance, chunk_trace.kept = score, keep
            kept.append([h for h, keep in zip(group, verdict.kept, strict=True) if keep])
        return kept

    def _generate(
        self, question: str, sub_questions: Sequence[str], kept: list[list[ChunkHit]], trace: QuestionTrace
    ) -> dict[int, AnswerSection]:
        contexts = [
            SectionContext(
                sub_question_index=i,
                sub_question=sq,
                chunks=[SourceChunk(filename=h.filename, page=h.chunk.page, text=self._shown(h)) for h in kept[i]],
            )
            for i, sq in enumerate(sub_questions)
            if kept[i]
        ]
        if not contexts:
            return {}
        shape = exact_sections_type(
            [(c.sub_question_index, [(chunk.filename, chunk.page) for chunk in c.chunks]) for c in contexts],
            max_bullets=MAX_BULLETS,
        )
        signature = self.answer.signature.with_updated_fields("sections", type_=shape)
        result = self._call("answer", self.answer, trace, sections_context=contexts, signature=signature)
        sections = getattr(result, "sections", None)
        answered: dict[int, AnswerSection] = {}
        for section in sections if isinstance(sections, list | tuple) else []:
            if isinstance(section, AnswerSection) and section.sub_question_index not in answered:
                answered[section.sub_question_index] = section
        return answered

    def _section(
        self,
        index: int,
        sub_question: str,
        chunks: list[ChunkHit],
        answered: dict[int, AnswerSection],
        allowed: frozenset[str] | None,
        trace: QuestionTrace,
    ) -> Section:
        verdict = build_section(index, sub_question, chunks, answered.get(index), allowed, MAX_BULLETS)
        record_section(trace, index, verdict)
        refs = tuple(SourceRef(document_id=s.document_id, filename=s.filename, page=s.page) for s in verdict.sources)
        if verdict.status == "error":
            return Section(index=index, sub_question=sub_question, status="error", error=MISSING_SECTION)
        return Section(
            index=index, sub_question=sub_question, bullets=verdict.bullets, sources=refs, status=verdict.status
        )

    def _shown(self, hit: ChunkHit) -> str:
        return defuse_field_markers(hit.chunk.text[: self.settings.program.max_chunk_chars])
