"""The record of one question: what was planned, read, scored, guarded, answered and spent, and the
functions that copy each stage's outcome into it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, ConfigDict, Field

from pipeline.guards.citations import SectionVerdict, citation_label
from pipeline.guards.sanitise import valid_text
from pipeline.types import Strict

if TYPE_CHECKING:
    from pipeline.execution.direct import DirectAnswer
    from pipeline.execution.executor import ExecutionResult
    from pipeline.execution.rounds import QuestionRetrieval, RoundRun, SubQuestionRetrieval
    from pipeline.program.calls import CallOutcome


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
    """A guard acting: which guard, on what, and why."""

    model_config = ConfigDict(frozen=False)
    guard: str
    target: str
    reason: str


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


class QuestionTrace(Strict):
    """Everything recorded about one question; what gets labelled and compiled against."""

    model_config = ConfigDict(frozen=False)
    question: str
    scope: dict[str, Any]
    planner: dict[str, Any] = Field(default_factory=dict)
    sub_questions: list[SubQuestionTrace] = Field(default_factory=list)
    interventions: list[Intervention] = Field(default_factory=list)
    fallbacks: list[Intervention] = Field(default_factory=list)
    store_document_ids: list[str] = Field(default_factory=list)
    tool_loop: ToolLoopTrace | None = None
    direct_answer: DirectAnswerTrace | None = None
    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    timings: dict[str, float] = Field(default_factory=dict)
    answer: str = ""
    sections: list[dict[str, Any]] = Field(default_factory=list)

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


def record_call(trace: QuestionTrace, name: str, outcome: CallOutcome) -> None:
    """Add one step's LM call to the trace: calls, tokens, time, and a fallback when it was unparseable."""
    trace.lm_calls += outcome.calls
    trace.prompt_tokens += outcome.prompt_tokens
    trace.completion_tokens += outcome.completion_tokens
    trace.timings[name] = trace.timings.get(name, 0.0) + outcome.seconds
    if outcome.unparseable is not None:
        trace.fallbacks.append(Intervention(guard=name, target="lm_output", reason=valid_text(outcome.unparseable)))


def record_section(trace: QuestionTrace, index: int, verdict: SectionVerdict) -> None:
    """Add what the guards did to one answer section to the trace."""
    target = f"section:{index}"
    if verdict.status == "error":
        trace.fallbacks.append(Intervention(guard="answer", target=target, reason="missing from the answer"))
        return
    if verdict.bullets_given:
        reason = f"{verdict.bullets_given} bullets cut to {verdict.max_bullets}"
        trace.interventions.append(Intervention(guard="answer", target=target, reason=reason))
    for removed in verdict.removed_citations:
        label = citation_label(valid_text(removed.filename), removed.page)
        trace.interventions.append(Intervention(guard="citation", target=f"{target}:{label}", reason=removed.reason))
    for item in verdict.rendered_out:
        trace.interventions.append(Intervention(guard="render", target=target, reason=item))
    for dropped in verdict.dropped:
        trace.interventions.append(
            Intervention(guard="grounding", target=f"{target}:{dropped.text}", reason=dropped.reason)
        )
