"""Runs scope steps against the store through the tool loop; no bad id ever reaches a store call.

Step references resolve to every document id the referenced step returned. retrieve_chunks
accepts only canonical UUIDs that exist in the catalog and lie inside the scope, then the
entity gate; a step left with no ids is retried with the scope's ids, then falls back to
retrieve_docs -> retrieve_chunks. Every rejected value, exclusion and fallback is traced.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from pipeline.execution.steps import Step, Steps, ToolName
from pipeline.execution.tool_loop import (
    CallRecord,
    CallStatus,
    ContextSource,
    StopReason,
    ToolCall,
    ToolError,
    ToolLoop,
)
from pipeline.execution.tools import RetrievalTools, SearchStore, ToolRecorder, context_sources
from pipeline.guards.entity_gate import ChunkExclusion, Exclusion
from pipeline.guards.ids import IdRejection, resolve_step_references
from pipeline.intake.scope import Scope, gate_entity_ids
from pipeline.settings import CoreConfig
from pipeline.types import ChunkHit, DocumentHit, SearchMode

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StepTrace:
    """One executed (or skipped) step: ids asked for, ids sent, rejections, outcome."""

    step_id: str
    tool: ToolName
    query: str
    requested: tuple[str, ...]
    sent: tuple[str, ...] | None
    rejections: tuple[IdRejection, ...]
    result_ids: tuple[str, ...]
    status: CallStatus
    error: ToolError | None = None
    fallback_for: str | None = None
    filled_from: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class ExecutionTrace:
    """Everything the executor decided for one question."""

    scope: Scope
    given: Steps
    gate_entity_ids: tuple[str, ...]
    steps: tuple[StepTrace, ...]
    gate_exclusions: tuple[Exclusion, ...]
    relaxed: tuple[str, ...]
    chunk_exclusions: tuple[ChunkExclusion, ...]
    calls: tuple[CallRecord, ...]
    stop_reason: StopReason | None
    given_up: tuple[str, ...]

    @property
    def rejections(self) -> tuple[IdRejection, ...]:
        return tuple(r for s in self.steps for r in s.rejections)

    @property
    def fallbacks(self) -> tuple[StepTrace, ...]:
        return tuple(s for s in self.steps if s.fallback_for is not None)


@dataclass(frozen=True)
class ExecutionResult:
    """Documents found by retrieve_docs, chunks that may be shown and cited, and the trace."""

    documents: tuple[DocumentHit, ...]
    chunks: tuple[ChunkHit, ...]
    trace: ExecutionTrace
    user_message: str | None


def _result_ids(tool: ToolName, value: Any) -> tuple[str, ...]:
    if tool == "retrieve_docs":
        return tuple(h.document.document_id for h in value)
    return tuple(dict.fromkeys(h.chunk.document_id for h in value))


def execute_steps(
    store: SearchStore,
    steps: Steps,
    scope: Scope,
    *,
    mentioned_entity_ids: Sequence[str] = (),
    doc_type_hint: AbstractSet[str] = frozenset(),
    config: CoreConfig | None = None,
    context: Sequence[ContextSource] = (),
    weights: Mapping[str, float] | None = None,
    dense_query: str | None = None,
    mode: SearchMode = "hybrid",
) -> ExecutionResult:
    """Run `steps` inside `scope`. The gate protects the scope's property, else the entities
    the question names; `context` adds retry sources after the scope's (e.g. the user's reply)."""
    config = config or CoreConfig()
    gate_ids = gate_entity_ids(scope, mentioned_entity_ids)
    run = RetrievalTools(store, scope, config, gate_ids, doc_type_hint, weights, dense_query, mode)
    loop = ToolLoop(run.tools(), config.tool_loop, [*context_sources(scope, store.entity_document_ids), *context])
    ex = _Execution(run, loop)
    for step in steps.steps:
        ex.run_step(step)
    trace = ExecutionTrace(
        scope=scope,
        given=steps,
        gate_entity_ids=tuple(gate_ids),
        steps=tuple(ex.traces),
        gate_exclusions=tuple(run.gate_exclusions),
        relaxed=tuple(run.relaxed),
        chunk_exclusions=tuple(run.chunk_exclusions),
        calls=tuple(c for it in loop.iterations for c in it.calls),
        stop_reason=loop.stopped,
        given_up=tuple(g.tool for g in loop.given_up),
    )
    return ExecutionResult(tuple(ex.documents.values()), tuple(ex.chunks.values()), trace, loop.user_message())


class _Execution:
    """Walks the steps: resolves references, calls tools, falls back, collects results."""

    def __init__(self, run: RetrievalTools, loop: ToolLoop) -> None:
        self.run, self.loop = run, loop
        self.results: dict[str, tuple[str, ...]] = {}
        self.traces: list[StepTrace] = []
        self.documents: dict[str, DocumentHit] = {}
        self.chunks: dict[int, ChunkHit] = {}

    def _call(
        self,
        step_id: str,
        tool: ToolName,
        query: str,
        args: dict[str, object],
        requested: tuple[str, ...],
        early: Sequence[IdRejection] = (),
        fallback_for: str | None = None,
    ) -> CallRecord:
        self.run.recorder = ToolRecorder()
        record = self.loop.run_iteration([ToolCall(tool, {"query": query, **args})]).calls[0]
        ids = _result_ids(tool, record.value) if record.ok else ()
        if record.ok:
            self.results[step_id] = ids
            self._collect(tool, record.value)
        filled = next((a.filled_from for a in reversed(record.attempts) if a.filled_from), None)
        note = "skipped: tool given up or loop stopped" if record.status == "skipped" else None
        self.traces.append(
            StepTrace(
                step_id=step_id,
                tool=tool,
                query=query,
                requested=requested,
                sent=self.run.recorder.sent,
                rejections=(*early, *self.run.recorder.rejections),
                result_ids=ids,
                status=record.status,
                error=record.error,
                fallback_for=fallback_for,
                filled_from=filled,
                note=note,
            )
        )
        return record

    def _collect(self, tool: ToolName, value: Any) -> None:
        if tool == "retrieve_docs":
            for hit in value:
                self.documents.setdefault(hit.document.document_id, hit)
        else:
            for hit in value:
                self.chunks.setdefault(hit.chunk.row, hit)

    def run_step(self, step: Step) -> None:
        args: dict[str, object] = {} if step.k is None else {"k": step.k}
        if step.tool == "retrieve_docs":
            self._call(step.step_id, "retrieve_docs", step.query, args, step.document_ids)
            return
        values, early = resolve_step_references(step.document_ids, self.results)
        record = self._call(
            step.step_id,
            "retrieve_chunks",
            step.query,
            {**args, "document_ids": values},
            step.document_ids,
            early,
        )
        if record.error is not None and record.error.code == "missing_param":
            self._fallback(step)

    def _fallback(self, step: Step) -> None:
        """retrieve_docs then retrieve_chunks on what it found, unless that cannot help."""
        reason = None
        if self.loop.stopped or self.loop.is_given_up("retrieve_docs"):
            reason = "fallback not possible: retrieve_docs given up or loop stopped"
        elif step.query in self.run.empty_searches:
            reason = "fallback skipped: the same search already found no documents"
        if reason is not None:
            log.info("step %s: %s", step.step_id, reason)
            self.traces.append(
                StepTrace(
                    step_id=f"{step.step_id}__fallback",
                    tool="retrieve_docs",
                    query=step.query,
                    requested=(),
                    sent=None,
                    rejections=(),
                    result_ids=(),
                    status="skipped",
                    fallback_for=step.step_id,
                    note=reason,
                )
            )
            return
        log.info("step %s had no document ids; falling back to retrieve_docs -> retrieve_chunks", step.step_id)
        docs_id = f"{step.step_id}__fallback_docs"
        found = self._call(docs_id, "retrieve_docs", step.query, {}, (), fallback_for=step.step_id)
        if not found.ok or not self.results.get(docs_id):
            return
        chunks_id = f"{step.step_id}__fallback_chunks"
        ids = list(self.results[docs_id])
        done = self._call(
            chunks_id,
            "retrieve_chunks",
            step.query,
            {"document_ids": ids},
            tuple(ids),
            fallback_for=step.step_id,
        )
        if done.ok:
            self.results[step.step_id] = self.results[chunks_id]
