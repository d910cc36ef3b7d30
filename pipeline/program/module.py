"""The DSPy program: decompose -> per-sub-question retrieval inside the guards -> one scoring
call -> answer -> citation check. `forward()` only wires steps; every decision that is not
the LM's lives in plain functions (scope, executor, relevance, citations)."""

from __future__ import annotations

import copy
import logging
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from pipeline.errors import LMFailure
from pipeline.execution.executor import ExecutionResult, execute_steps
from pipeline.execution.steps import scope_steps
from pipeline.guards.citations import (
    CitedSource,
    RemovedCitation,
    check_citation,
    citation_label,
    grounded,
    is_abstention,
    restates_question,
    shown_sources,
)
from pipeline.guards.relevance import apply_scores
from pipeline.guards.sanitise import defuse_field_markers, plain_answer_text
from pipeline.intake.analysis import analyse_question
from pipeline.intake.planner import plan_question, round_weights
from pipeline.intake.planner_state import PlannerState
from pipeline.intake.scope import Scope, allowed_document_ids
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
)
from pipeline.program.trace import Intervention, QuestionTrace, RetrievedChunk, SubQuestionTrace
from pipeline.settings import CoreConfig
from pipeline.store import Store
from pipeline.types import ChunkHit
from signatures import Decompose, HyDE, ScoreRelevance, SectionedAnswer
from signatures.shapes import exact_scores_type, exact_sections_type
from signatures.types import AnswerSection, ChunkForScoring, ScoringGroup, SectionContext, SourceChunk

log = logging.getLogger(__name__)

MAX_SUB_QUESTIONS = 5
MAX_BULLETS = 5
NO_INFORMATION = "No relevant information found"
MAX_SUB_QUESTION_CHARS = 2000  # the store's query limit (scope.Step.query)
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class ProgramSettings:
    """Knobs of the program that are not the LM's: threshold, sizes, limits."""

    relevance_threshold: float = 5.0
    max_chunk_chars: int = 900
    # Output budgets per call: a small model that starts repeating itself stops here.
    max_tokens: dict[str, int] = field(
        default_factory=lambda: {"decompose": 160, "score": 400, "answer": 900, "hyde": 200}
    )
    core: CoreConfig = field(default_factory=CoreConfig)


@dataclass(frozen=True)
class RetrievalContext:
    """What the planner decided for every sub-question's retrieval."""

    mentioned: tuple[str, ...] = ()
    doc_type_hint: frozenset[str] = frozenset()
    weights: dict[str, float] | None = None
    passage: str | None = None

    def with_passage(self, passage: str | None) -> RetrievalContext:
        return RetrievalContext(self.mentioned, self.doc_type_hint, self.weights, passage)


def valid_text(text: str) -> str:
    """`text` with lone surrogates (which UTF-8, JSON and pydantic refuse) replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def clean_sub_questions(raw: object, question: str) -> tuple[list[str], bool]:
    """1..5 distinct non-blank sub-questions; ([question], True) when there are none.

    A sub-question longer than the store accepts as a query is dropped; reading stops at the
    fifth distinct one (an output of 100,000 items costs no more than one of five). Sub-questions
    are shown to the later LM calls, so field markers in them are defused like document text.
    """
    items = raw if isinstance(raw, list) else []
    seen: dict[str, str] = {}  # case-folded -> as written (the first spelling wins)
    for item in items:
        text = defuse_field_markers(valid_text(item.strip())) if isinstance(item, str) else ""
        if text and len(text) <= MAX_SUB_QUESTION_CHARS:
            seen.setdefault(text.casefold(), text)
        if len(seen) == MAX_SUB_QUESTIONS:
            break
    cleaned = list(seen.values())
    return (cleaned, False) if cleaned else ([question], True)


class _LMCallCounter(BaseCallback):
    """Counts the LM calls one step really makes (answered from the cache or not)."""

    def __init__(self) -> None:
        self.calls = 0

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.calls += 1


def _one_call_settings(counter: _LMCallCounter) -> dict[str, Any]:
    """dspy settings for one step: `counter` listening, and at most one LM call.

    ChatAdapter retries an unparseable completion through JSONAdapter, a second call the step's
    budget has no room for; the program has its own fallback for unparseable output instead.
    """
    settings: dict[str, Any] = {"callbacks": [*dspy.settings.get("callbacks", []), counter]}
    adapter = dspy.settings.adapter
    retries = not isinstance(adapter, dspy.JSONAdapter) and getattr(adapter, "use_json_adapter_fallback", False)
    if isinstance(adapter, dspy.ChatAdapter) and retries:
        single = copy.copy(adapter)
        single.use_json_adapter_fallback = False
        settings["adapter"] = single
    elif adapter is None:
        settings["adapter"] = dspy.ChatAdapter(use_json_adapter_fallback=False)
    return settings


def strip_inline_citations(text: str) -> str:
    """Bullet text without bracketed page references the LM wrote itself (only checked ones are shown)."""
    return re.sub(r"\s*\[[^\[\]]{1,300}?,\s*(?:page|p\.)\s*\d+\s*\]", "", text, flags=re.IGNORECASE).strip()


class ScopedQA(dspy.Module):
    """Scoped, sectioned question answering with citations checked against what was shown."""

    def __init__(self, store: Store, settings: ProgramSettings | None = None) -> None:
        super().__init__()
        self.store = store
        self.settings = settings or ProgramSettings()
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
        started = time.perf_counter()
        counter = _LMCallCounter()
        try:
            with dspy.context(**_one_call_settings(counter)), dspy.track_usage() as usage:
                result = predictor(**inputs, config={"max_tokens": self.settings.max_tokens.get(name, 1024)})
        except Exception as exc:  # unparseable output falls back; any other failure is the LM's: an error event
            root: BaseException = exc
            while root.__cause__ is not None:
                root = root.__cause__
            # json_repair gives up on deeply nested output ("{{{{...") with a ValueError from a
            # RecursionError that DSPy does not wrap: that output is unparseable, the LM did answer.
            if not isinstance(exc, dspy.utils.exceptions.AdapterParseError) and not isinstance(root, RecursionError):
                raise LMFailure(
                    f"{name}: {type(exc).__name__}: {exc}", public=f"{name}: {type(root).__name__}"
                ) from exc
            trace.fallbacks.append(
                Intervention(guard=name, target="lm_output", reason=valid_text(f"unparseable: {exc!s:.300}"))
            )
            return None
        finally:
            trace.lm_calls += max(1, counter.calls)
            trace.timings[name] = trace.timings.get(name, 0.0) + time.perf_counter() - started
        for entries in usage.usage_data.values():
            for entry in entries:
                trace.prompt_tokens += int(entry.get("prompt_tokens") or 0)
                trace.completion_tokens += int(entry.get("completion_tokens") or 0)
        return result

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
        verdicts, fallbacks = apply_scores(sizes, getattr(result, "scores", None), self.settings.relevance_threshold)
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
        if not chunks:
            return Section(index=index, sub_question=sub_question, bullets=(NO_INFORMATION,), status="no_information")
        section = answered.get(index)
        if section is None or not section.bullets:
            trace.fallbacks.append(
                Intervention(guard="answer", target=f"section:{index}", reason="missing from the answer")
            )
            return Section(
                index=index,
                sub_question=sub_question,
                status="error",
                error="Unable to generate an answer for this sub-question.",
            )
        shown = shown_sources(chunks)
        bullets: list[str] = []
        cited: dict[tuple[str, int], CitedSource] = {}
        if len(section.bullets) > MAX_BULLETS:
            trace.interventions.append(
                Intervention(
                    guard="answer",
                    target=f"section:{index}",
                    reason=f"{len(section.bullets)} bullets cut to {MAX_BULLETS}",
                )
            )
        page_texts: dict[tuple[str, int], list[str]] = {}
        for hit in chunks:
            page_texts.setdefault((hit.chunk.document_id, hit.chunk.page), []).append(hit.chunk.text)
        all_texts = [hit.chunk.text for hit in chunks]
        seen: set[str] = set()
        for bullet in section.bullets[:MAX_BULLETS]:
            sources: list[CitedSource] = []
            for citation in bullet.citations:
                verdict = check_citation(index, citation.filename, citation.page, shown, allowed)
                if isinstance(verdict, RemovedCitation):
                    trace.interventions.append(
                        Intervention(
                            guard="citation",
                            target=f"section:{index}:{citation_label(valid_text(citation.filename), citation.page)}",
                            reason=verdict.reason,
                        )
                    )
                    continue
                sources.append(verdict)
            text, stripped = plain_answer_text(strip_inline_citations(valid_text(bullet.text)))
            for item in stripped:
                trace.interventions.append(Intervention(guard="render", target=f"section:{index}", reason=item))
            problem = self._unsupported(text, sub_question, sources, page_texts, all_texts)
            if problem is None and bullet.citations and not sources:
                # it claimed support from pages it was never shown: drop it, not just its citations
                problem = "every citation was removed"
            normalised = " ".join(text.casefold().split())
            if problem is None and normalised in seen:
                problem = "repeats an earlier bullet"
            if problem is not None:
                trace.interventions.append(
                    Intervention(guard="grounding", target=f"section:{index}:{text[:80]}", reason=problem)
                )
                continue
            seen.add(normalised)
            for source in sources:
                cited.setdefault((source.document_id, source.page), source)
            labels = dict.fromkeys(citation_label(s.filename, s.page) for s in sources)
            bullets.append(" ".join([text, *labels]))
        if not bullets:
            return Section(index=index, sub_question=sub_question, bullets=(NO_INFORMATION,), status="no_information")
        refs = tuple(SourceRef(document_id=s.document_id, filename=s.filename, page=s.page) for s in cited.values())
        return Section(index=index, sub_question=sub_question, bullets=tuple(bullets), sources=refs)

    @staticmethod
    def _unsupported(
        text: str,
        sub_question: str,
        sources: list[CitedSource],
        page_texts: dict[tuple[str, int], list[str]],
        all_texts: list[str],
    ) -> str | None:
        """Why a bullet may not be shown (None: it may): empty, a restated question, or not
        supported by the pages it cites (an uncited bullet: by any chunk shown, unless it abstains)."""
        if not text:
            return "empty"
        if restates_question(text, sub_question):
            return "restates the question"
        if sources:
            cited_texts = [t for s in sources for t in page_texts.get((s.document_id, s.page), [])]
            return None if grounded(text, cited_texts) else "not supported by the cited pages"
        if is_abstention(text) or grounded(text, all_texts):
            return None
        return "uncited and not supported by the chunks shown"

    def _shown(self, hit: ChunkHit) -> str:
        return defuse_field_markers(hit.chunk.text[: self.settings.max_chunk_chars])


def render_markdown(sections: Sequence[Section]) -> str:
    """The answer as Markdown: one `## Sub-question N:` section per sub-question."""
    parts = []
    for section in sections:
        lines = [f"## Sub-question {section.index + 1}: {section.sub_question}"]
        if section.status == "error":
            lines.append(f"- {section.error}")
        else:
            lines.extend(f"- {bullet}" for bullet in section.bullets)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def record_execution(trace: QuestionTrace, index: int, sub_question: str, result: ExecutionResult) -> None:
    """Copy what the executor decided into the question trace."""
    sq = SubQuestionTrace(index=index, sub_question=sub_question)
    for step in result.trace.steps:
        sq.steps.append(
            {
                "step_id": step.step_id,
                "tool": step.tool,
                "sent": list(step.sent or ()),
                "status": str(step.status),
            }
        )
        for rejection in step.rejections:
            trace.interventions.append(
                Intervention(guard="id", target=repr(rejection.value)[:120], reason=str(rejection.reason))
            )
        if step.sent:
            trace.store_document_ids.extend(step.sent)
    for exclusion in result.trace.gate_exclusions:
        trace.interventions.append(
            Intervention(
                guard="entity_gate",
                target=f"{exclusion.document_id} {exclusion.filename}",
                reason=", ".join(exclusion.reasons),
            )
        )
    for chunk_exclusion in result.trace.chunk_exclusions:
        trace.interventions.append(
            Intervention(
                guard="chunk_backstop",
                target=f"{chunk_exclusion.filename} page {chunk_exclusion.page}",
                reason=", ".join(chunk_exclusion.reasons),
            )
        )
    for hit in result.chunks:
        sq.chunks.append(
            RetrievedChunk(
                document_id=hit.chunk.document_id,
                filename=hit.filename,
                page=hit.chunk.page,
                row=hit.chunk.row,
                retrieval_score=hit.score,
            )
        )
    trace.sub_questions.append(sq)
