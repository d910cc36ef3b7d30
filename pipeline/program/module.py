"""The DSPy program: decompose -> per-sub-question retrieval inside the guards -> one scoring
call -> answer -> citation check. `forward()` only wires steps; every decision that is not
the LM's lives in plain functions (scope, executor, relevance, citations)."""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Generator, Iterator, Sequence
from dataclasses import replace
from typing import Any

import dspy

from pipeline.answering.typed_answers import absent
from pipeline.deadline import Deadline, DeadlinePassed
from pipeline.entities import without_mentions
from pipeline.errors import LMFailure
from pipeline.escapes import citation_label, defuse_field_markers, valid_text
from pipeline.execution.acceptance import missing_sub_questions, name_terms
from pipeline.execution.rounds import Clock, QuestionRetrieval
from pipeline.execution.tools import query_within
from pipeline.guards.citations import citation_name
from pipeline.guards.relevance import GroupVerdict, apply_scores, keep_without_scores
from pipeline.guards.sanitise import (
    MAX_ANSWER_BYTES,
    MAX_QUESTION_CHARS,
    MAX_SUB_QUESTION_CHARS,
    MAX_SUB_QUESTIONS,
    clean_sub_questions,
    sanitise_question,
    sanitised_text,
)
from pipeline.guards.sub_questions import check_sub_questions
from pipeline.intake.contract import Comparison, contract_record, entity_comparison, read_contract
from pipeline.intake.parts import question_parts
from pipeline.intake.planner import plan_in_scope, plan_scope_note
from pipeline.intake.scope import QuestionScope, Scope, ScopeNote
from pipeline.program.answer_step import AnswerStep
from pipeline.program.calls import call_once
from pipeline.program.comparing import compared_sections, comparison_of, named_part, part_retrieval
from pipeline.program.endings import answer_stopped, answer_unknown_names, answer_without_retrieval
from pipeline.program.events import (
    Completed,
    Decomposed,
    Decomposing,
    Event,
    Failed,
    Filtering,
    Generating,
    GeneratingSubquestion,
    Retrieving,
    Section,
    cap_answer,
    render_markdown,
    with_titles,
)
from pipeline.program.question_run import QuestionRun
from pipeline.program.trace import (
    Intervention,
    QuestionTrace,
    fit_trace,
    record_attempts,
    record_call,
    record_question,
    record_retrieval,
    record_sanitised,
    record_scope,
    record_tool_loop,
)
from pipeline.settings import Settings
from pipeline.store import Store
from pipeline.types import ChunkHit
from pipeline.values.typed import TypedValue
from signatures import AnswerLines, ChooseAnswer, ComputeFigure, Decompose, HyDE, JudgeClaim, ScoreRelevance
from signatures.models import ChunkForScoring, ScoringGroup
from signatures.shapes import exact_scores_type

log = logging.getLogger(__name__)

__all__ = ["MAX_SUB_QUESTIONS", "ScopedQA"]


class ScopedQA(dspy.Module):
    """Scoped, sectioned question answering with citations checked against what was shown.

    `clock` (seconds, monotonic) measures the plan's latency budget and the question's time bound
    (`settings.question.seconds`); tests pass a fake one.
    """

    def __init__(self, store: Store, settings: Settings | None = None, clock: Clock = time.monotonic) -> None:
        super().__init__()
        self.store = store
        self.settings = settings or Settings()
        self.clock = clock
        self.decompose = dspy.Predict(Decompose)
        self.score = dspy.Predict(ScoreRelevance)
        self.answer = dspy.Predict(AnswerLines)
        self.hyde = dspy.Predict(HyDE)
        self.compute = dspy.Predict(ComputeFigure)
        self.judge = dspy.Predict(JudgeClaim)
        self.choose = dspy.Predict(ChooseAnswer)
        self._doc_types = frozenset(d.doc_type for d in store.catalog.documents.values())
        self._name_terms = name_terms(store.catalog.entities.values())

    def forward(self, question: str, scope: Scope) -> dspy.Prediction:
        last: Event | None = None
        for event in self.stream(question, scope):
            last = event
        if isinstance(last, Failed):
            raise LMFailure(last.message)
        if not isinstance(last, Completed):
            raise LMFailure("the program ended without an answer")
        return dspy.Prediction(answer=last.answer, sections=list(last.sections), trace=last.trace, value=last.value)

    # -- the pipeline as a stream of events -----------------------------------------------

    def stream(self, question: str, scope: Scope) -> Iterator[Event]:
        """Progress events in seed-003 order, ending with `completed` or `error`; that last event
        carries the question's trace."""
        started = time.perf_counter()
        arrived = self.clock()
        deadline = Deadline(self.settings.question.seconds, self.clock, started=arrived)
        trace = self._new_trace(question, scope)
        if not trace.question.strip():
            yield Failed(message="the question is empty once markup and control characters are removed", trace=trace)
            return
        run = self._plan(trace, scope)
        run.deadline = deadline
        plan = run.plan
        scoped = run.scope
        if plan.strategy != "retrieve_then_answer":
            yield answer_without_retrieval(plan, run.reasoning_only, trace, started)
            return
        comparison = comparison_of(run)
        if comparison is None and run.unknown_names:
            yield answer_unknown_names(run, started)
            return
        note = self.scope_note(run) if comparison is None else None
        steps = self.settings.program.steps
        hyde = steps.uses_lm("hyde") and any(r.use_hyde for r in plan.retrieval_rounds)
        # The line says "LM" whenever a call is made in this stage: HyDE's, before any sub-question, counts.
        yield Decomposing(lm=(steps.uses_lm("decompose") or hyde) and comparison is None)
        asked: list[str] = []
        try:
            deadline.check("planning")
            if comparison is not None:
                sections_out, notice = yield from self._compared(run, comparison, arrived)
            else:
                sections_out, notice = yield from self._answered(run, arrived, hyde, asked)
        except DeadlinePassed as stop:
            yield answer_stopped(run, asked, stop, started)
            return
        except LMFailure as exc:
            trace.timings["total"] = time.perf_counter() - started
            failure = Intervention(guard="lm", target="call", reason=str(exc))
            trace.fallbacks.append(failure)
            log.warning("language model failed: %s", failure.reason)  # the server's own words, sanitised
            # The event names the failing step and error type only: its text may carry endpoints.
            fit_trace(trace)
            yield Failed(message=f"language model failed: {exc.public}", trace=trace)
            return
        trace.timings["total"] = time.perf_counter() - started
        sections_out = [with_titles(section, self.citation_name) for section in sections_out]
        sections_out, over = cap_answer(sections_out, MAX_ANSWER_BYTES)
        if over:
            reason = f"{over} evidence quotes dropped from the end: the answer was over {MAX_ANSWER_BYTES} bytes"
            trace.interventions.append(Intervention(guard="cap", target="answer", reason=reason))
        answer = render_markdown(sections_out)
        if note is not None and note.kind == "other_entity" and any(s.sources for s in sections_out):
            note = None  # the gate found the asked entity in a selected document after all: answered from it
        if note is not None:
            trace.interventions.append(Intervention(guard="scope", target=note.kind, reason=note.message))
            # Another entity's documents: the answer is the note, typed, with no section and no citation.
            sections_out = [] if note.kind == "other_entity" else sections_out
            answer = note.message if note.kind == "other_entity" else f"{note.message}\n\n{answer}"
        trace.answer = answer
        trace.sections = [s.model_dump(mode="json") for s in sections_out]
        fit_trace(trace)
        completed = Completed(
            answer=answer,
            sections=tuple(sections_out),
            value=self._answer_value(run, sections_out, note, comparison is not None),
            lm_calls=trace.lm_calls,
            cached_calls=trace.cached_calls,
            tokens=trace.tokens,
            seconds=round(trace.timings["total"], 3),
            strategy=plan.strategy,
            clarifying_questions=tuple(q.question for q in plan.clarifying_questions),
            notice=notice,
            scope_note=note,
            implicit_scope=tuple(self.store.catalog.entities[e].name for e in scoped.implicit_entity_ids),
            trace=trace,
        )
        trace.value = completed.value
        yield completed

    def _answered(
        self, run: QuestionRun, arrived: float, hyde: bool, asked: list[str]
    ) -> Generator[Event, None, tuple[list[Section], str | None]]:
        """The steps of one question (HyDE when `hyde`, decompose, retrieve, score, answer) as events, its
        sub-questions appended to `asked` once known; returns its sections and the tool loop's notice."""
        plan, trace, steps, deadline = run.plan, run.trace, self.settings.program.steps, run.deadline
        passage = self._hyde(run) if hyde else None
        sub_questions = self.decompose_step(run)
        asked.extend(sub_questions)
        yield Decomposed(sub_questions=tuple(sub_questions))
        yield Retrieving()
        retrieval = QuestionRetrieval(
            self.store,
            run.scope,
            plan,
            self.settings.core,
            passage=passage,
            clock=self.clock,
            started=arrived,
            deadline=deadline,
        )
        # a sub-question naming one entity of a scope of several is retrieved inside that entity's documents only
        parts = [named_part(self, sq, run.scope) for sq in sub_questions]
        groups: list[list[ChunkHit]] = []
        loops = []
        for i, (sq, part) in enumerate(zip(sub_questions, parts, strict=True)):
            own = retrieval if part is None else part_retrieval(self, run, part, arrived)
            groups.append(self._retrieve(i, sq, own, trace))
            loops.append(own)
        record_tool_loop(trace, retrieval if any(p is None for p in parts) else loops[-1])
        yield Filtering(lm=steps.uses_lm("score"))
        deadline.check("scoring")
        kept = self.score_step(run, sub_questions, groups)
        # the answer step may call the LM for its lines, a yes/no question's judge, or the choice among the span
        # floor's candidates
        chooses = steps.answer == "span" and steps.uses_lm("choose")
        yield Generating(lm=steps.uses_lm("answer") or steps.uses_lm("judge") or chooses)
        deadline.check("answering")
        allowed = [run.scope.allowed if p is None else frozenset(p.document_ids) for p in parts]
        sections = self.answer_sections(run, sub_questions, kept, groups, allowed)
        for section in sections:
            yield GeneratingSubquestion(index=section.index, sub_question=section.sub_question)
        return sections, retrieval.user_message

    def _compared(
        self, run: QuestionRun, comparison: Comparison, arrived: float
    ) -> Generator[Event, None, tuple[list[Section], str | None]]:
        """A comparison's steps as events (pipeline.program.comparing); returns its sections."""
        yield Retrieving()
        sub_questions, sections = compared_sections(self, run, comparison, arrived)
        yield Decomposed(sub_questions=tuple(sub_questions))
        yield Generating(lm=False)
        for section in sections:
            yield GeneratingSubquestion(index=section.index, sub_question=section.sub_question)
        return sections, None

    def _answer_value(
        self, run: QuestionRun, sections: Sequence[Section], note: ScopeNote | None, compared: bool
    ) -> TypedValue | None:
        """The answer's typed value: a comparison's, the one section's, or, when the scope holds only other
        entities' documents, the question's absent value (with the note's words); None for several parts."""
        if note is not None and note.kind == "other_entity" and run.contract is not None:
            return absent(run.contract.kind, run.contract, note.message[:400])
        if compared or len(sections) == 1:
            return sections[-1].value if sections else None
        return None

    def citation_name(self, document_id: str) -> str:
        """How citations name the document (pipeline.guards.citations.citation_name); "" when it has no title."""
        document = self.store.catalog.documents.get(document_id)
        return "" if document is None else citation_name(document, self.store.catalog.entities)

    def unknown_names(self, quoted: Sequence[str], scope: QuestionScope) -> tuple[str, ...]:
        """The quoted names (a capital letter among them) that no document in `scope` writes, in a collection of
        named entities (a quoted entity's own name is no literal term: it never gets here)."""
        if not self.store.catalog.entities:
            return ()
        names = [q for q in quoted if any(c.isupper() for c in q)]
        return tuple(q for q in names if not self.store.mentions(q, scope.document_ids))

    def scope_note(self, run: QuestionRun) -> ScopeNote | None:
        """What the answer must say about whose documents the scope selected."""
        return plan_scope_note(run.plan, run.scope, self.store)

    # -- steps (each learned step is also run alone by stage-wise optimisation) ----------------

    @property
    def doc_types(self) -> frozenset[str]:
        """The document types of the catalog (what a question may name as the kind it asks about)."""
        return self._doc_types

    def start(self, question: str, scope: Scope) -> QuestionRun:
        """The plan and a fresh trace for `question` in `scope` (every step below continues them)."""
        return self._plan(self._new_trace(question, scope), scope)

    def _new_trace(self, question: str, scope: Scope) -> QuestionTrace:
        """A trace holding the question as sanitised (what a user wrote is display text from here on:
        the record, the plan and every prompt see it sanitised)."""
        clean = sanitise_question(question)
        trace = QuestionTrace(question=clean.text, scope=scope.model_dump(mode="json"))
        record_question(trace, clean, MAX_QUESTION_CHARS)
        return trace

    def _plan(self, trace: QuestionTrace, scope: Scope) -> QuestionRun:
        """The plan for the question without its format instructions (they are applied to the answer by
        code, never searched for or made into sub-questions)."""
        planner = self.settings.core.planner
        contract = read_contract(trace.question)
        body = contract.question or trace.question
        context = " ".join(contract.context)
        intake, plan, scoped = plan_in_scope(body, scope, self.store, self._doc_types, planner, context)
        catalog = self.store.catalog
        named = [catalog.entities[e] for e in intake.entity_ids if e in catalog.entities]
        if contract.comparison is None and len(named) >= 2:
            # entities named without quotes ("Which is higher, the rent at Elm Court or at Oak Court?") compare as
            # quoted companies do
            found = entity_comparison(body, [e.names for e in named], catalog.vocabulary.generic)
            contract = contract if found is None else replace(contract, comparison=found, kind="name")
        trace.planner = plan.model_dump(mode="json")
        trace.format_request = contract.format.text if contract.format else None
        trace.contract = contract_record(contract)
        trace.steps = self.settings.program.steps.model_dump()
        record_scope(trace, scoped, self.store.catalog.entities)
        reasoning = intake.answerability == "reasoning_only"
        # a question naming a known entity too (a comparison the contract did not read) reads that entity's documents
        quoted = [t.text for t in intake.literal_terms if t.kind == "quoted"] if not intake.entity_ids else []
        unknown = self.unknown_names(quoted, scoped) if quoted else ()
        return QuestionRun(plan, trace, scoped, reasoning, contract.format, contract, unknown_names=unknown)

    def answer_sections(
        self,
        run: QuestionRun,
        sub_questions: Sequence[str],
        kept: list[list[ChunkHit]],
        retrieved: Sequence[Sequence[ChunkHit]] | None = None,
        section_allowed: Sequence[Collection[str] | None] | None = None,
    ) -> list[Section]:
        """The answer step alone: each sub-question's answer line and evidence (at most one answer call and one
        compute call, none where the steps run their floors), through the guards; a figure asked for is read
        from the tables of the documents retrieved for it. Each section cites only the scope's documents, or those
        `section_allowed` gives it."""
        generic = self.store.catalog.vocabulary.generic
        step = AnswerStep(
            self.settings.program,
            generic,
            self._call,
            self.answer,
            self.compute,
            self.store,
            judge=self.judge,
            choose=self.choose,
        )
        queries = [self._ranking_query(sq, kept[i]) for i, sq in enumerate(sub_questions)]
        catalog = self.store.catalog
        entities = list(catalog.entities.values())
        asked = [without_mentions(sq, entities, catalog.vocabulary) for sq in sub_questions]
        return step.run(run, sub_questions, kept, queries, asked, run.scope.allowed, retrieved, section_allowed)

    def _call(self, name: str, predictor: dspy.Predict, run: QuestionRun, **inputs: Any) -> dspy.Prediction | None:
        """One LM call, counted with its tokens; None when the output could not be parsed, or when
        the plan's output-token budget is spent (the call is then skipped and the fallback recorded)."""
        trace = run.trace
        budget = run.plan.budget.max_tokens
        remaining = budget - trace.completion_tokens
        if remaining <= 0:
            reason = f"the output-token budget of {budget} is spent ({trace.completion_tokens} used): call skipped"
            trace.fallbacks.append(Intervention(guard="budget", target=name, reason=reason))
            return None
        max_tokens = self.settings.program.call_tokens(name)
        if remaining < max_tokens:
            reason = f"output capped at {remaining} tokens (was {max_tokens}): what remains of the budget of {budget}"
            trace.fallbacks.append(Intervention(guard="budget", target=name, reason=reason))
            max_tokens = remaining
        try:
            outcome = call_once(name, predictor, max_tokens, self.settings.lm_requests, run.deadline, **inputs)
        except LMFailure as exc:
            record_attempts(trace, name, exc.calls, exc.retried)
            raise
        record_call(trace, name, outcome)
        return outcome.prediction

    def decompose_step(self, run: QuestionRun) -> list[str]:
        """Sub-questions from the LM (only those that say what the question says) or from its floor, plus any
        of the question's own the LM missed (up to the cap)."""
        goal, trace = run.plan.goal, run.trace
        step = self.settings.program.steps.decompose
        if step == "lm":
            raw = getattr(self._call("decompose", self.decompose, run, question=goal), "sub_questions", None)
        else:
            raw = [goal] if step == "question" else question_parts(goal)
        sub_questions, fell_back, removed, cut = clean_sub_questions(raw, goal)
        record_sanitised(trace, "sub_questions", removed, cut)
        if step == "lm" and not fell_back:
            sub_questions, dropped = check_sub_questions(sub_questions, goal)
            for item in dropped:
                target = f"sub_question:{item.text}"
                trace.interventions.append(Intervention(guard="sub_question", target=target, reason=item.reason))
            if not sub_questions:
                sub_questions, fell_back = [sanitised_text(goal, MAX_SUB_QUESTION_CHARS)], True
        if fell_back:
            trace.fallbacks.append(
                Intervention(guard="decompose", target="sub_questions", reason="empty: using the question")
            )
        required = run.plan.acceptance_criteria.must_answer_subquestions
        for missed in missing_sub_questions(sub_questions, required, self._name_terms):
            if len(sub_questions) >= MAX_SUB_QUESTIONS:
                break
            missed = sanitised_text(missed, MAX_SUB_QUESTION_CHARS)
            sub_questions.append(missed)
            reason = "a sub-question the question asks was missing from the decomposition: added"
            trace.interventions.append(Intervention(guard="plan", target=f"sub_question:{missed}", reason=reason))
        return sub_questions

    def _hyde(self, run: QuestionRun) -> str | None:
        """The LM's hypothetical passage for dense search (the step "hyde" = "lm"; its floor "none" searches with
        the question itself)."""
        result = self._call("hyde", self.hyde, run, question=run.plan.goal)
        passage = getattr(result, "passage", None)
        return valid_text(passage.strip()) if isinstance(passage, str) and passage.strip() else None

    def _retrieve(
        self, index: int, sub_question: str, retrieval: QuestionRetrieval, trace: QuestionTrace
    ) -> list[ChunkHit]:
        started = time.perf_counter()
        try:
            result = retrieval.retrieve(sub_question)
        finally:
            trace.timings["retrieve"] = trace.timings.get("retrieve", 0.0) + time.perf_counter() - started
        record_retrieval(trace, index, result)
        return list(result.chunks)

    def score_step(
        self, run: QuestionRun, sub_questions: Sequence[str], groups: list[list[ChunkHit]]
    ) -> list[list[ChunkHit]]:
        if not any(groups):
            return groups
        trace = run.trace
        step = self.settings.program.steps.score
        if step != "lm":
            keep = self.settings.program.keep_top_k if step == "top_k" else None
            return self._keep(trace, groups, keep_without_scores([len(g) for g in groups], keep))
        payload = [
            ScoringGroup(
                sub_question_index=i,
                sub_question=sq,
                chunks=[
                    ChunkForScoring(
                        chunk_index=j,
                        source=citation_label(h.filename, h.chunk.page),
                        text=self._shown(h, self.settings.program.score_chunk_chars),
                    )
                    for j, h in enumerate(groups[i])
                ],
            )
            for i, sq in enumerate(sub_questions)
        ]
        sizes = [len(g) for g in groups]
        signature = self.score.signature.with_updated_fields("scores", type_=exact_scores_type(sizes))
        result = self._call("score", self.score, run, groups=payload, signature=signature)
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
        return self._keep(trace, groups, verdicts)

    def _keep(
        self, trace: QuestionTrace, groups: list[list[ChunkHit]], verdicts: Sequence[GroupVerdict]
    ) -> list[list[ChunkHit]]:
        """Each group's kept chunks, with every chunk's score and verdict copied into the trace."""
        kept: list[list[ChunkHit]] = []
        for verdict, group, sq_trace in zip(verdicts, groups, trace.sub_questions, strict=True):
            for chunk_trace, score, keep in zip(sq_trace.chunks, verdict.scores, verdict.kept, strict=True):
                chunk_trace.relevance, chunk_trace.kept = score, keep
            kept.append([h for h, keep in zip(group, verdict.kept, strict=True) if keep])
        return kept

    def _ranking_query(self, question: str, hits: Sequence[ChunkHit]) -> str:
        """`question` as sentences are ranked against it: without the names of the entities owning every
        kept chunk's document (inside those documents the names match everything)."""
        return query_within(self.store, question, {h.chunk.document_id for h in hits})

    def _shown(self, hit: ChunkHit, limit: int) -> str:
        return defuse_field_markers(hit.chunk.text[:limit])
