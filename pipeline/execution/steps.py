"""The plan shapes a scope allows (seed 000), built in code: chip -> one retrieve_chunks step on the
selected ids; property -> one step on the ids the catalog relates to the property; no scope ->
retrieve_docs then retrieve_chunks on "<from_step_search_docs>". No LM ever writes steps.
"""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipeline.guards.ids import step_reference
from pipeline.intake.scope import QuestionScope
from pipeline.text import cut_text
from pipeline.types import Strict

log = logging.getLogger(__name__)

ToolName = Literal["retrieve_docs", "retrieve_chunks"]
SEARCH_DOCS_STEP = "search_docs"
SEARCH_CHUNKS_STEP = "search_chunks"
SEARCH_DOCS_REF = step_reference(SEARCH_DOCS_STEP)
MAX_PLAN_STEPS = 6
MAX_QUERY_CHARS = 2000


class Step(Strict):
    """One tool call of a plan; document_ids may hold "<from_step_ID>" references."""

    step_id: str = Field(pattern=r"^[a-z0-9_]{1,40}$")
    tool: ToolName
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    document_ids: tuple[str, ...] = ()
    k: int | None = Field(default=None, ge=1, le=100)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query is blank")
        return value


class Steps(Strict):
    """Steps in execution order with distinct ids."""

    steps: tuple[Step, ...] = Field(min_length=1, max_length=MAX_PLAN_STEPS)

    @model_validator(mode="after")
    def _distinct_ids(self) -> Steps:
        ids = [s.step_id for s in self.steps]
        if len(set(ids)) != len(ids):
            raise ValueError(f"step ids repeat: {ids}")
        return self


def two_steps(query: str) -> Steps:
    """The fixed no-scope plan: find documents, then chunks of every document found."""
    return Steps(
        steps=(
            Step(step_id=SEARCH_DOCS_STEP, tool="retrieve_docs", query=query),
            Step(
                step_id=SEARCH_CHUNKS_STEP,
                tool="retrieve_chunks",
                query=query,
                document_ids=(SEARCH_DOCS_REF,),
            ),
        )
    )


def scope_steps(scope: QuestionScope, query: str) -> Steps:
    """The plan for `scope`, built in code: no LM decides which documents may be read. A chip or a
    property reads its documents in one step; no scope, or an implicit entity scope, finds documents
    first. A query over the store's limit (a sub-question with a long name added) is cut, and the cut logged."""
    query, length = cut_text(query, MAX_QUERY_CHARS)
    if length is not None:
        log.info("query of %d characters cut to %d", length, MAX_QUERY_CHARS)
    if scope.document_ids is None or scope.implicit:
        return two_steps(query)
    return Steps(
        steps=(Step(step_id=SEARCH_CHUNKS_STEP, tool="retrieve_chunks", query=query, document_ids=scope.document_ids),)
    )
