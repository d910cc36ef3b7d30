"""Runs scope steps against the store through the question's tool loop; no bad id ever reaches a store call.

Step references resolve to every document id the referenced step returned. retrieve_chunks
accepts only canonical UUIDs that exist in the catalog and lie inside the scope, then the
entity gate; a step left with no ids is retried with the scope's ids, then falls back to
retrieve_docs -> retrieve_chunks. Every rejected value, exclusion and fallback is traced.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pipeline.execution.steps import Step, Steps, ToolName
from pipeline.execution.tool_loop import CallRecord, CallStatus, StopReason, ToolCall, ToolError, ToolLoop
from pipeline.execution.tools import RetrievalTools, SearchSettings, SearchStore, ToolRecorder, context_sources
from pipeline.guards.entity_gate import ChunkExclusion, DocumentVerdict, Exclusion
from pipeline.guards.ids import IdRejection, resolve_step_references
from pipeline.intake.scope import QuestionScope
from pipeline.settings import CoreConfig
from pipeline.types import ChunkHit, DocumentHit

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
    """What the executor decided while running one list of steps, and the loop's state after it."""

    scope: QuestionScope
    given: Steps
    gate_entity_ids: tuple[str, ...]
    steps: tuple[StepTrace, ...]
    gate_exclusions: tuple[Exclusion, ...]
    relaxed: tuple[str, ...]
    chunk_exclusions: tuple[ChunkExclusion, ...]
    calls: tuple[CallRecord, ...]
    stop_reason: StopReason | None
    given_up: tuple[str, ...]
    # Every verdict the entity gate reached in this run (kept and excluded), with its evidence.
    gate_verdicts: tuple[DocumentVerdict, ...] = ()

    @property
    def rejections(self) -> tuple[IdRejection, ...]:
        return tuple(r for s in self.steps for r in s.rejections)

    @property
    def fallbacks(self) -> tuple[StepTrace, ...]:
        return tuple(s for s in self.steps if s.fallback_for is not None)


@dataclass(frozen=True)
class ExecutionResult:
    """Documents found by retrieve_docs, chunks that may be shown and cited, and the trace.

    `chunk_lists` holds each successful retrieve_chunks call's ranking, in call order.
    """

    documents: tuple[DocumentHit, ...]
    chunks: tuple[ChunkHit, ...]
    chunk_lists: tuple[tuple[ChunkHit, ...], ...]
    trace: ExecutionTrace
    user_message: str | None


def _result_ids(tool: ToolName, value: Any) -> tuple[str, ...]:
    if tool == "retrieve_docs":
        return tuple(h.document.document_id for h in value)
    return tuple(dict.fromkeys(h.chunk.document_id for h in value))


class StepExecutor:
    """Runs lists of steps for ONE question inside its scope: one RetrievalTools (so the entity
    gate judges each document once per question) and one ToolLoop (so its limits, given-up
    tools and stop reason hold for the whole question)."""

    def __init__(self, store: SearchStore, scope: QuestionScope, config: CoreConfig | None = None) -> None:
        self.scope = scope
        self.config = config or CoreConfig()
        self.tools = RetrievalTools(store, scope, self.config, SearchSettings())
        sources = context_sources(scope)
        self.loop = ToolLoop(self.tools.tools(), self.config.tool_loop, sources)

    @property
    def stop_reason(self) -> StopReason | None:
        return self.loop.stopped

    @property
    def given_up(self) -> tuple[str, ...]:
        return tuple(g.tool for g in self.loop.given_up)

    @property
    def user_message(self) -> str | None:
        """The loop's one message for the user about tools given up or why it stopped."""
        return self.loop.user_message()

    @property
    def sent_documents(self) -> tuple[str, ...]:
        """Distinct document ids sent to the store so far over the question."""
        return tuple(self.tools.sent_documents)

    def run(self, steps: Steps, search: SearchSettings | None = None) -> ExecutionResult:
        """Run `steps` with `search` (retrievers, fusion, gate inputs); the loop's counters carry on."""
        search = search or SearchSettings()
        self.tools.search = search
        tools = self.tools
        marks = (len(tools.gate_exclusions), len(tools.relaxed), len(tools.chunk_exclusions), len(tools.gate_verdicts))
        ex = _Execution(self.tools, self.loop)
        for step in steps.steps:
            ex.run_step(step)
        trace = ExecutionTrace(
            scope=self.scope,
            given=steps,
            gate_entity_ids=search.gate_entity_ids,
            steps=tuple(ex.traces),
            gate_exclusions=tuple(self.tools.gate_exclusions[marks[0] :]),
            relaxed=tuple(self.tools.relaxed[marks[1] :]),
            chunk_exclusions=tuple(self.tools.chunk_exclusions[marks[2] :]),
            calls=tuple(ex.calls),
            stop_reason=self.loop.stopped,
            given_up=self.given_up,
            gate_verdicts=tuple(tools.gate_verdicts[marks[3] :]),
        )
        return ExecutionResult(
            tuple(ex.documents.values()), tuple(ex.chunks.values()), tuple(ex.chunk_lists), trace, self.user_message
        )


class _Execution:
    """Walks the steps: resolves references, calls tools, falls back, collects results."""

    def __init__(self, run: RetrievalTools, loop: ToolLoop) -> None:
        self.run, self.loop = run, loop
        self.results: dict[str, tuple[str, ...]] = {}
        self.traces: list[StepTrace] = []
        self.documents: dict[str, DocumentHit] = {}
        self.chunks: dict[int, ChunkHit] = {}
        self.chunk_lists: list[tuple[ChunkHit, ...]] = []
        self.calls: list[CallRecord] = []

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
        self.calls.append(record)
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
            self.chunk_lists.append(tuple(value))
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
