"""The record of one question: what was planned, read, scored, guarded, answered and spent, and the
functions that copy each stage's outcome into it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, ConfigDict, Field, field_validator

from pipeline.escapes import citation_label, valid_text
from pipeline.guards.sanitise import MAX_TRACE_BYTES, Sanitised, display_record
from pipeline.guards.sections import GuardedSection
from pipeline.types import Strict
from pipeline.values.typed import TypedValue

if TYPE_CHECKING:
    from pipeline.execution.direct import DirectAnswer
    from pipeline.execution.executor import ExecutionResult
    from pipeline.execution.rounds import QuestionRetrieval, RoundRun, SubQuestionRetrieval
    from pipeline.intake.scope import QuestionScope
    from pipeline.program.calls import CallOutcome
    from pipeline.types import Entity


class RetrievedChunk(Strict):
    model_config = ConfigDict(frozen=False)
    document_id: str
    filename: str
    page: int
    row: int
    retrieval_score: float
    relevance: float | None = None
    kept: bool = True


class RoundTrace(Strict):
    """One retrieval round that ran: its queries and search, what it found, the verdict after it."""

    round_id: int
    purpose: str
    queries: list[str]
    mode: str
    k: dict[str, int]
    weights: dict[str, float]
    max_docs: int | None
    use_hyde: bool
    documents: int
    chunks: int
    new_chunks: int
    sources: int
    uncovered_entities: list[str] = Field(default_factory=list)
    missing_terms: list[str] = Field(default_factory=list)
    accepted: bool


class SubQuestionTrace(Strict):
    """Retrieval and scoring of one sub-question."""

    model_config = ConfigDict(frozen=False)
    index: int
    sub_question: str
    # The tool steps run for it (older traces call this `plan`).
    steps: list[dict[str, Any]] = Field(default_factory=list, validation_alias=AliasChoices("steps", "plan"))
    rounds: list[RoundTrace] = Field(default_factory=list)
    # Why no further round ran (pipeline.execution.rounds.RoundStop).
    stop_reason: str | None = None
    chunks: list[RetrievedChunk] = Field(default_factory=list)


class Intervention(Strict):
    """A guard acting: which guard, on what, and why (target and reason sanitised for display, capped)."""

    model_config = ConfigDict(frozen=False)
    guard: str
    target: str
    reason: str

    @field_validator("target", "reason")
    @classmethod
    def _displayable(cls, value: str) -> str:
        # targets and reasons quote LM output, error messages and document names: the record is
        # shown by `history` and served as JSON, so it holds display-safe text only
        return display_record(value)


class GateDecision(Strict):
    """The entity gate's decision on one document: kept or excluded, why, and what it read to decide."""

    document_id: str
    filename: str
    kept: bool
    reasons: list[str] = Field(default_factory=list)
    # Where the asked entity was found ("summary: ...", "opening: ...") and what the catalog says.
    evidence: list[str] = Field(default_factory=list)
    other_entities: list[str] = Field(default_factory=list)

    @field_validator("filename", "evidence", "other_entities")
    @classmethod
    def _displayable(cls, value: str | list[str]) -> str | list[str]:
        # evidence quotes document text: the record is served as JSON and shown by `history`
        return display_record(value) if isinstance(value, str) else [display_record(v) for v in value]


class ToolLoopTrace(Strict):
    """The question's one tool loop at the end: why it stopped, which tools it gave up, what the user was told."""

    stop_reason: str | None = None
    given_up: list[str] = Field(default_factory=list)
    message: str | None = None


class DirectAnswerTrace(Strict):
    """A direct answer: what it was worked out from, or why it was not."""

    kind: str
    expression: str | None = None
    result: str | None = None
    refused: str | None = None


class LineTrace(Strict):
    """How one section's answer line was made: the kind of answer asked for, which way the answer step ran
    ("lm" or a floor), how well the sentences supported an answer, the line proposed and the sentences it
    named, and what became of it (status, and why it is not found)."""

    index: int
    kind: str
    step: str
    support: float | None = None
    proposed: str | None = None
    evidence_ids: list[int] = Field(default_factory=list)
    basis: str | None = None
    formula: str | None = None
    status: str = "answered"
    reason: str | None = None

    @field_validator("proposed", "reason")
    @classmethod
    def _displayable(cls, value: str | None) -> str | None:
        # the proposal is LM output: the record is shown by `history` and served as JSON
        return None if value is None else display_record(value)


class QuestionTrace(Strict):
    """Everything recorded about one question; what gets labelled and compiled against."""

    model_config = ConfigDict(frozen=False)
    question: str
    scope: dict[str, Any]
    # The entities of an implicit entity scope: a question with no scope named them, so only their
    # documents were searched (pipeline.intake.scope.question_scope derives the same ids from these).
    implicit_scope: list[str] = Field(default_factory=list)
    planner: dict[str, Any] = Field(default_factory=dict)
    sub_questions: list[SubQuestionTrace] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    fallbacks: list[Intervention] = Field(default_factory=list)
    # The entity gate's decision on each document it judged (once per document and gate input).
    gate_decisions: list[GateDecision] = Field(default_factory=list)
    store_document_ids: list[str] = Field(default_factory=list)
    tool_loop: ToolLoopTrace | None = None
    direct_answer: DirectAnswerTrace | None = None
    # LM calls made: every HTTP attempt, retries included (what the budget counts)
    lm_calls: int = 0
    # the same per program step, e.g. {"decompose": 1, "answer": 3} when two attempts of the answer failed
    lm_attempts: dict[str, int] = Field(default_factory=dict)
    # of lm_calls, those DSPy's response cache answered: no tokens, and no model time in the timings
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    timings: dict[str, float] = Field(default_factory=dict)
    # How each section's answer line was made (pipeline.answering), in section order.
    lines: list[LineTrace] = Field(default_factory=list)
    # The question's instructions about the answer's format, taken out before planning ("Answer in ...").
    format_request: str | None = None
    # What the question's instructions ask of the answer (pipeline.intake.contract): the kind of value, its
    # absent value, currency, unit, scale and period, a comparison, and every instruction taken off it.
    contract: dict[str, Any] = Field(default_factory=dict)
    # Which way each learned step ran: "lm" or its floor (ProgramSettings.steps).
    steps: dict[str, str] = Field(default_factory=dict)
    answer: str = ""
    sections: list[dict[str, Any]] = Field(default_factory=list)
    # The question's answer typed as it asked for it (Completed.value); each section's own is in `sections`.
    value: TypedValue | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def _record_execution(trace: QuestionTrace, sq: SubQuestionTrace, round_id: int, result: ExecutionResult) -> None:
    """Copy one executed step list's steps, id rejections and gate exclusions into the trace."""
    for step in result.trace.steps:
        sq.steps.append(
            {
                "round": round_id,
                "step_id": step.step_id,
                "tool": step.tool,
                "query": step.query,
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
    for verdict in result.trace.gate_verdicts:
        trace.gate_decisions.append(
            GateDecision(
                document_id=verdict.document_id,
                filename=verdict.filename,
                kept=verdict.keep or verdict.document_id in result.trace.relaxed,
                reasons=list(verdict.reasons),
                evidence=list(verdict.evidence),
                other_entities=list(verdict.other_addresses),
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


def _round_trace(run: RoundRun) -> RoundTrace:
    search, verdict = run.search, run.acceptance
    return RoundTrace(
        round_id=run.round_id,
        purpose=run.purpose,
        queries=list(run.queries),
        mode=search.mode,
        k=dict(search.depths or {}),
        weights=dict(search.weights or {}),
        max_docs=search.documents_k,
        use_hyde=search.dense_query is not None,
        documents=len(run.documents),
        chunks=run.chunks,
        new_chunks=run.new_chunks,
        sources=verdict.sources,
        uncovered_entities=list(verdict.uncovered_entities),
        missing_terms=list(verdict.missing_terms),
        accepted=verdict.met,
    )


def record_retrieval(trace: QuestionTrace, index: int, retrieval: SubQuestionRetrieval) -> None:
    """Copy what one sub-question's rounds ran, found and decided into the question trace."""
    sq = SubQuestionTrace(index=index, sub_question=retrieval.sub_question, stop_reason=retrieval.stop_reason)
    for run in retrieval.rounds:
        for _, result in run.executions:
            _record_execution(trace, sq, run.round_id, result)
        sq.rounds.append(_round_trace(run))
    for hit in retrieval.chunks:
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


def record_tool_loop(trace: QuestionTrace, retrieval: QuestionRetrieval) -> None:
    """Record how the question's one tool loop ended."""
    executor = retrieval.executor
    trace.tool_loop = ToolLoopTrace(
        stop_reason=executor.stop_reason, given_up=list(executor.given_up), message=executor.user_message
    )


def record_direct_answer(trace: QuestionTrace, direct: DirectAnswer) -> None:
    """Record a direct answer and what it was worked out from."""
    trace.answer = direct.answer
    trace.direct_answer = DirectAnswerTrace(
        kind=direct.kind, expression=direct.expression, result=direct.result, refused=direct.refused
    )


def record_sanitised(trace: QuestionTrace, target: str, removed: Sequence[str], cut: Sequence[str]) -> None:
    """Record what sanitising removed from `target`'s text (guard "render") and what a cap cut (guard "cap")."""
    trace.interventions.extend(Intervention(guard="render", target=target, reason=item) for item in removed)
    trace.interventions.extend(Intervention(guard="cap", target=target, reason=item) for item in cut)


def record_question(trace: QuestionTrace, clean: Sanitised, max_chars: int) -> None:
    """Record what sanitising the question removed and cut."""
    cut = [] if clean.cut_from is None else [f"question of {clean.cut_from} characters cut to {max_chars}"]
    record_sanitised(trace, "question", clean.removed, cut)


def record_scope(trace: QuestionTrace, scope: QuestionScope, entities: Mapping[str, Entity]) -> None:
    """Record an implicit entity scope: the entities it came from, and a note naming them."""
    if not scope.implicit:
        return
    trace.implicit_scope = list(scope.implicit_entity_ids)
    names = [entities[e].name for e in scope.implicit_entity_ids if e in entities]
    count = len(scope.document_ids or ())
    reason = f"the question names {', '.join(names)}: searched their {count} documents only"
    trace.interventions.append(Intervention(guard="scope", target="implicit", reason=reason))


def record_attempts(trace: QuestionTrace, name: str, attempts: int, failures: tuple[str, ...]) -> None:
    """Count one step's LM attempts against the question and record each failed attempt that was retried."""
    trace.lm_calls += attempts
    trace.lm_attempts[name] = trace.lm_attempts.get(name, 0) + attempts
    for number, failure in enumerate(failures, start=1):
        trace.fallbacks.append(
            Intervention(guard="lm_retry", target=name, reason=f"attempt {number} failed ({failure}): retried")
        )


def record_call(trace: QuestionTrace, name: str, outcome: CallOutcome) -> None:
    """Add one step's LM call to the trace: attempts, tokens, time, and a fallback when it was unparseable."""
    record_attempts(trace, name, outcome.calls, outcome.retried)
    trace.prompt_tokens += outcome.prompt_tokens
    trace.completion_tokens += outcome.completion_tokens
    trace.timings[name] = trace.timings.get(name, 0.0) + outcome.seconds
    trace.cached_calls += int(outcome.cached)
    if outcome.unparseable is not None:
        trace.fallbacks.append(Intervention(guard=name, target="lm_output", reason=valid_text(outcome.unparseable)))


def record_line(trace: QuestionTrace, line: LineTrace, guarded: GuardedSection) -> None:
    """Add how one section's answer line was made, and what the guards did to it, to the trace."""
    target = f"section:{line.index}"
    # validated anew (model_copy skips validation): the proposal is LM output and must be display text
    trace.lines.append(
        LineTrace.model_validate({**line.model_dump(), "status": guarded.status, "reason": guarded.reason})
    )
    for removed in guarded.removed:
        label = citation_label(valid_text(removed.filename), removed.page)
        trace.interventions.append(Intervention(guard="citation", target=f"{target}:{label}", reason=removed.reason))
    for guard, reason in guarded.interventions:
        trace.interventions.append(Intervention(guard=guard, target=target, reason=reason))


def fit_trace(trace: QuestionTrace, max_bytes: int = MAX_TRACE_BYTES) -> None:
    """Shrink `trace` in place to at most `max_bytes` of JSON, recording the cut as an intervention.

    The caps on each LM output keep a trace far below this; when it is reached anyway, detail goes in
    the order it matters least: step lists, guard records past the first 50, the planner's state and
    the retrieved chunks, the sections (the answer text is kept, cut), and last everything else.
    """
    size = _json_bytes(trace)
    if size <= max_bytes:
        return
    budget = max_bytes - 1024  # room for the record of the cut itself
    dropped: list[str] = []
    for name, shrink in _SHRINKS:
        if _json_bytes(trace) <= budget:
            break
        shrink(trace, budget)
        dropped.append(name)
    reason = f"trace of {size} bytes over the {max_bytes}-byte cap: dropped {', '.join(dropped)}"
    trace.interventions.append(Intervention(guard="cap", target="trace", reason=reason))


def _json_bytes(trace: QuestionTrace) -> int:
    return len(trace.model_dump_json().encode("utf-8"))


def _drop_steps(trace: QuestionTrace, budget: int) -> None:
    for sq in trace.sub_questions:
        sq.steps.clear()


def _drop_records(trace: QuestionTrace, budget: int) -> None:
    del trace.interventions[50:]
    del trace.fallbacks[50:]
    del trace.gate_decisions[50:]


def _drop_planner_and_chunks(trace: QuestionTrace, budget: int) -> None:
    trace.planner.clear()
    for sq in trace.sub_questions:
        sq.chunks.clear()


def _drop_sections(trace: QuestionTrace, budget: int) -> None:
    trace.sections.clear()
    trace.answer = trace.answer[: budget // 8]  # at most 4 bytes a character, and half the budget


def _drop_everything_else(trace: QuestionTrace, budget: int) -> None:
    trace.interventions.clear()
    trace.fallbacks.clear()
    trace.gate_decisions.clear()
    trace.sub_questions.clear()
    trace.store_document_ids.clear()
    trace.question = trace.question[: budget // 16]


_SHRINKS = (
    ("steps", _drop_steps),
    ("guard records past 50", _drop_records),
    ("planner state and chunks", _drop_planner_and_chunks),
    ("sections", _drop_sections),
    ("all other detail", _drop_everything_else),
)
