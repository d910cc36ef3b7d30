"""Questions as server-side jobs: started by one request, answered in their own thread, read by polling, stopped by
another request. A job outlives the request and the page that started it: closing the tab leaves it running, and
it lands in the history as done, failed or cancelled.

Cancelling a job asks its StopSignal to stop: the LM refuses every call from then on (the call already under way
finishes), the worker stops at its next step and records the question as cancelled.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pipeline.intake.scope import Scope
from pipeline.program.calls import StopSignal
from pipeline.program.events import Event
from pipeline.serving.estimate import Estimate, StageTimes, current_stage, estimate_left
from pipeline.serving.streaming import StreamWorker

# Finished jobs kept in memory for the page to read their answer; older ones live on in the history.
KEPT_FINISHED = 200

JobStatus = Literal["running", "done", "failed", "cancelled"]


class JobLog:
    """A job's events in order, each with the time it arrived; every poll reads them again from any point.

    No back-pressure: a question sends fewer than ten events plus one per section.
    """

    cancel_reason = "cancelled by the user"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.cancelled = threading.Event()
        self._clock = clock
        self._lock = threading.Lock()
        self._events: list[tuple[float, Event]] = []

    def put(self, event: Event) -> bool:
        """Keep `event`; False once the job is cancelled (the worker stops)."""
        if self.cancelled.is_set():
            return False
        with self._lock:
            self._events.append((self._clock(), event))
        return True

    def close(self) -> None:
        """The worker is done; its status says how it ended."""

    def cancel(self) -> None:
        self.cancelled.set()

    def events(self) -> list[tuple[float, Event]]:
        """Every event so far with the time it arrived, in order."""
        with self._lock:
            return list(self._events)


@dataclass
class Job:
    """One question answered in the background: what was asked, by which program, and its worker's progress."""

    job_id: str
    question: str
    scope: Scope
    program: str
    created_at: str
    log: JobLog
    stop: StopSignal
    worker: StreamWorker | None = None
    typical: StageTimes | None = None
    # which steps of the program run by the LM and which by their floors, in words
    steps: str = ""
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)
    ended: float | None = None

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def status(self) -> JobStatus:
        """ "running" until the worker has ended, then done, failed or cancelled."""
        if self.ended is None or self.worker is None or self.worker.status is None:
            return "running"
        # a question stopped at its time bound ended with an answer (the history says it stopped)
        return "done" if self.worker.status == "stopped" else self.worker.status

    @property
    def history_id(self) -> str | None:
        return None if self.worker is None else self.worker.history_id

    @property
    def lm_calls(self) -> int:
        """LM calls made so far."""
        return 0 if self.worker is None else self.worker.counter.calls

    @property
    def elapsed(self) -> float:
        return (self.ended if self.ended is not None else self.clock()) - self.started

    def cancel(self) -> None:
        """Ask the job to stop: no LM call starts after this (the one under way finishes)."""
        self.stop.request()

    def progress(self) -> tuple[str | None, Estimate | None]:
        """The stage it is in and, while it runs, the time it has left (None without measured questions)."""
        stage, entered = current_stage([(event.phase, at) for at, event in self.log.events()])
        if self.ended is not None:
            return stage, None
        now = self.clock()
        in_stage = 0.0 if entered is None else now - entered
        return stage, estimate_left(self.typical, stage, in_stage, now - self.started)


class JobBoard:
    """The jobs of one server by id: every running one and the last `keep` finished ones."""

    def __init__(self, keep: int = KEPT_FINISHED) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._jobs: OrderedDict[str, Job] = OrderedDict()

    def add(self, job: Job) -> None:
        with self._lock:
            self._jobs[job.job_id] = job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def ended(self, job: Job) -> None:
        """Mark `job` ended and forget the oldest finished jobs beyond `keep`."""
        job.ended = job.clock()
        with self._lock:
            finished = [key for key, one in self._jobs.items() if one.ended is not None]
            for key in finished[: max(0, len(finished) - self._keep)]:
                del self._jobs[key]

    def newest_first(self) -> list[Job]:
        with self._lock:
            return list(reversed(self._jobs.values()))
