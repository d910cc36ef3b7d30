"""The record of one question: what was planned, read, scored, guarded, answered and spent."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, ConfigDict, Field

from pipeline.types import Strict


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
