"""The record of one question: what was planned, read, scored, guarded, answered and spent, and the
functions that copy each stage's outcome into it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, ConfigDict, Field

from pipeline.guards.citations import SectionVerdict, citation_label
from pipeline.guards.sanitise import valid_text
from pipeline.types import Strict

if TYPE_CHECKING:
    from pipeline.execution.executor import ExecutionResult
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


class SubQuestionTrace(Strict):
    """Retrieval and scoring of one sub-question."""

    model_config = ConfigDict(frozen=False)
    index: int
    sub_question: str
    # The tool steps run for it (older traces call this `plan`).
    steps: list[dict[str, Any]] = Field(default_factory=list, validation_alias=AliasChoices("steps", "plan"))
    chunks: list[RetrievedChunk] = Field(default_factory=list)


class Intervention(Strict):
    """A guard acting: which guard, on what, and why."""

    model_config = ConfigDict(frozen=False)
    guard: str
    target: str
    reason: str


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
    lm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    timings: dict[str, float] = Field(default_factory=dict)
    answer: str = ""
    sections: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


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
