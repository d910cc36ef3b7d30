"""/v1/jobs: a question answered in the background, read by polling, cancelled on request (pipeline.serving.jobs).

The page asks this way, so that a question outlives its tab: closing or reloading the page leaves the job
running, the page reattaches by its id, and the question lands in the history however it ends.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import JSONResponse, Response

from pipeline.guards.ids import is_canonical_uuid
from pipeline.guards.sanitise import sanitise_question
from pipeline.program.calls import LMCallCounter, StopSignal
from pipeline.serving.asking import prepare
from pipeline.serving.estimate import MEASURED_QUESTIONS, StageTimes, typical_times
from pipeline.serving.jobs import Job, JobLog
from pipeline.serving.schemas import ErrorResponse, EstimateOut, JobList, JobOut, QueryRequest
from pipeline.serving.scope_text import scope_out
from pipeline.serving.state import ServingState
from pipeline.serving.streaming import StreamWorker

log = logging.getLogger(__name__)

MAX_LISTED = 50
NO_JOB = "no such job (the server keeps finished jobs for a while; their questions are in the history)"


def job_router(state: ServingState) -> APIRouter:
    """The job endpoints of one app, bound to its state."""
    router = APIRouter(
        prefix="/v1/jobs", tags=["jobs"], responses={404: {"model": ErrorResponse, "description": "No such job"}}
    )

    def found(job_id: str) -> Job:
        job = state.jobs.get(job_id) if is_canonical_uuid(job_id) else None
        if job is None:
            raise HTTPException(404, NO_JOB)
        return job

    @router.post(
        "",
        status_code=202,
        responses={
            422: {"model": ErrorResponse, "description": "Invalid question, or an unknown document id or property"},
            503: {"model": ErrorResponse, "description": "Too many questions are running; retry shortly"},
        },
    )
    def start(body: QueryRequest) -> Response:
        """Start answering a question in the background; poll GET /v1/jobs/{job_id} for its progress."""
        prepared = prepare(state, body)
        if isinstance(prepared, Response):
            return prepared
        job_id = str(uuid.uuid4())
        log_ = JobLog()
        stop = StopSignal()
        stop.listen(log_.cancel)
        if not state.registry.reserve(job_id, log_):
            detail = f"{state.registry.limit} questions are already running; retry shortly"
            return JSONResponse({"detail": detail}, status_code=503, headers={"Retry-After": "1"})
        job = Job(
            job_id=job_id,
            question=sanitise_question(body.question).text,
            scope=prepared.scope,
            program=prepared.program_label,
            steps=prepared.steps,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            log=log_,
            stop=stop,
            typical=_typical(state),
        )

        def done(_: str) -> None:
            state.registry.release(job_id)
            state.jobs.ended(job)
            log.info("job %s: %s after %.1f s", job_id, job.status, job.elapsed)

        job.worker = StreamWorker(
            stream_id=job_id,
            question=body.question,
            scope=prepared.scope,
            program=prepared.program,
            lm=state.lm,
            adapter=state.adapter,
            channel=log_,
            on_done=done,
            history=state.history,
            counter=LMCallCounter(stop=stop),
        )
        state.registry.attach(job_id, job.worker)
        state.jobs.add(job)
        log.info("job %s: %s scope, %d chars", job_id, prepared.scope.kind, len(body.question))
        job.worker.start()
        return JSONResponse(_out(state, job, after=-1).model_dump(mode="json"), status_code=202)

    @router.get("")
    def listed(limit: int = Query(20, ge=1, le=MAX_LISTED)) -> JobList:
        """Running questions and the latest finished ones, newest first."""
        jobs = state.jobs.newest_first()[:limit]
        return JobList(jobs=[_out(state, job, after=None) for job in jobs])

    @router.get("/{job_id}")
    def one(job_id: str, after: int = Query(-1, ge=-1, description="Send only the events after this seq")) -> JobOut:
        """A job's progress, and its events after `after` (the completed answer is the last one)."""
        return _out(state, found(job_id), after=after)

    @router.post("/{job_id}/cancel")
    def cancel(job_id: str) -> JobOut:
        """Stop a job: no LM call starts after this (one under way finishes); it lands in the history as cancelled."""
        job = found(job_id)
        if job.status == "running":
            job.cancel()
            log.info("job %s: cancel requested", job_id)
        return _out(state, job, after=None)

    return router


def _typical(state: ServingState) -> StageTimes | None:
    """How long questions answered here with this LM took, by stage (None without a history or any question)."""
    if state.history is None:
        return None
    entries = state.history.recent(MEASURED_QUESTIONS, lm=state.lm_name, status="done")
    return typical_times([e.trace for e in entries])


def _out(state: ServingState, job: Job, after: int | None) -> JobOut:
    """What GET /v1/jobs/{id} says about `job`; its events after `after` (None: none)."""
    stage, estimate = job.progress()
    events: list[dict[str, Any]] = []
    arrived = job.log.events()
    if after is not None:
        for seq, (_, event) in enumerate(arrived):
            if seq > after:
                events.append({"job_id": job.job_id, "seq": seq, **event.model_dump(mode="json")})
    return JobOut(
        job_id=job.job_id,
        question=job.question,
        scope=scope_out(state.store.catalog, job.scope.model_dump(mode="json")),
        program=job.program,
        steps=job.steps,
        status=job.status,
        cancelling=job.stop.requested and job.status == "running",
        stage=stage,
        created_at=job.created_at,
        elapsed=round(job.elapsed, 1),
        lm_calls=job.lm_calls,
        estimate=None if estimate is None else EstimateOut(**vars(estimate)),
        history_id=job.history_id,
        events=events,
        next_seq=len(arrived),
    )
