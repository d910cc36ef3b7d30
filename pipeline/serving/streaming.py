"""One question's events, produced by the synchronous program in its own thread, read by the event loop (a
stream) or kept for whoever asks (a job, pipeline.serving.jobs).

The worker thread enters `dspy.context` itself (DSPy settings are context variables, so they must be
set in the thread that calls the LM). Events travel through an `EventChannel` holding at most a few
unread ones. Cancelling a channel (the client went away) stops the worker at its next step: it
takes no further event from the program, closes the program's generator, and its LM refuses every
further call, so the LM work still ahead in the current step (scoring, answering) is never done.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol

import dspy

from pipeline.errors import StreamCancelled
from pipeline.evaluation.history import Status, final_status
from pipeline.guards.sanitise import sanitise_question
from pipeline.intake.scope import Scope
from pipeline.program.calls import LMCallCounter, StopRequested, counting
from pipeline.program.events import Completed, Decomposed, Event, Failed
from pipeline.program.module import ScopedQA
from pipeline.program.trace import Intervention, QuestionTrace, SubQuestionTrace

try:  # dspy 3.4 exempts its adapters' own `messages=` calls from a deprecation warning; keep that through the view
    from dspy.clients._deprecation import _adapter_call, adapter_message_call
except ImportError:  # pragma: no cover - the marker goes away with the warning in dspy 3.5
    _adapter_call = None

log = logging.getLogger(__name__)

INTERNAL_ERROR = "internal error: the question could not be answered (details are in the server log)"
# Unread events a worker may run ahead of its client; one question yields fewer than ten.
CHANNEL_CAPACITY = 8
# A worker whose reader has not taken an event for this long gives up (a reader that died unseen).
STALLED_READER_SECONDS = 600.0


class QuestionLog(Protocol):
    """Where a worker writes its question: as running when it starts, closed with how it ended."""

    def begin(self, trace: QuestionTrace) -> str: ...

    def finish(self, history_id: str, trace: QuestionTrace, status: Status) -> bool: ...


class CancellableLM(dspy.BaseLM):
    """A view of a shared LM that refuses calls once its stream is cancelled.

    Every attribute is the wrapped LM's (BaseLM.__init__ is deliberately not run, so nothing is
    shadowed); only calling it checks the stream's cancel flag first. The wrapped LM keeps its own
    concurrency rules: the embedded model runs one generation at a time behind its engine's lock,
    a remote LM serves calls from many streams at once.
    """

    def __init__(self, inner: Any, cancelled: threading.Event) -> None:
        self._inner = inner
        self._cancelled = cancelled

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _check(self) -> None:
        if self._cancelled.is_set():
            raise StreamCancelled("the client disconnected; the stream was cancelled")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        origin = _adapter_call.get() if _adapter_call is not None else None
        if origin is not None and origin[0] is self:
            with adapter_message_call(self._inner, origin[1]):
                return self._inner(*args, **kwargs)
        return self._inner(*args, **kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> Any:
        self._check()
        return await self._inner.acall(*args, **kwargs)

    # BaseLM defines these as properties returning False/empty: read the wrapped LM's instead.
    @property
    def supports_function_calling(self) -> bool:
        return bool(self._inner.supports_function_calling)

    @property
    def supports_reasoning(self) -> bool:
        return bool(self._inner.supports_reasoning)

    @property
    def supports_response_schema(self) -> bool:
        return bool(self._inner.supports_response_schema)

    @property
    def supported_params(self) -> set[str]:
        return set(self._inner.supported_params)


class Idle:
    """What EventChannel.get returns when no event arrived in time."""


IDLE = Idle()


class EventChannel:
    """Events from one worker thread to the event loop: bounded, cancellable, closed by the worker."""

    cancel_reason = "the client disconnected"

    def __init__(self, loop: asyncio.AbstractEventLoop, capacity: int = CHANNEL_CAPACITY) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._space = threading.Semaphore(capacity)
        self.cancelled = threading.Event()

    def put(self, event: Event) -> bool:
        """Worker side: hand over `event`; False when the stream is cancelled (stop working)."""
        if not self._space.acquire(timeout=STALLED_READER_SECONDS):
            log.warning("stream reader took no event for %.0f s; cancelling", STALLED_READER_SECONDS)
            self.cancelled.set()
        if self.cancelled.is_set():
            return False
        return self._deliver(event)

    def close(self) -> None:
        """Worker side, always last: no more events."""
        self._deliver(None)

    def _deliver(self, item: Event | None) -> bool:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed: the server is gone
            self.cancelled.set()
            return False
        return True

    async def get(self, timeout: float | None) -> Event | Idle | None:
        """Loop side: the next event, None once the worker is done, IDLE after `timeout` seconds."""
        try:
            item = await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return IDLE
        self._space.release()
        return item

    def cancel(self) -> None:
        """Either side: stop the worker at its next step (idempotent)."""
        if not self.cancelled.is_set():
            self.cancelled.set()
            self._space.release()  # wake a worker waiting for room


class EventSink(Protocol):
    """Where a worker's events go: a stream's channel (read once, as they come) or a job's log (kept)."""

    cancelled: threading.Event
    # What cancelling it means, for the question's record ("the client disconnected", "cancelled by the user").
    cancel_reason: str

    def put(self, event: Event) -> bool: ...

    def close(self) -> None: ...

    def cancel(self) -> None: ...


class StreamRegistry:
    """The questions whose workers are running (streams and jobs alike), bounded by `limit`."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_concurrent_streams must be >= 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._channels: dict[str, EventSink] = {}
        self._workers: dict[str, StreamWorker] = {}

    def reserve(self, stream_id: str, channel: EventSink) -> bool:
        """Register a worker; False when `limit` are already running."""
        with self._lock:
            if len(self._channels) >= self.limit:
                return False
            self._channels[stream_id] = channel
            return True

    def release(self, stream_id: str) -> None:
        with self._lock:
            self._channels.pop(stream_id, None)
            self._workers.pop(stream_id, None)

    def attach(self, stream_id: str, worker: StreamWorker) -> None:
        """The worker answering a reserved stream (so that stopping the server can close its record)."""
        with self._lock:
            if stream_id in self._channels:
                self._workers[stream_id] = worker

    def end_all(self, reason: str) -> None:
        """Stop every running worker and close its question in the history as cancelled for `reason`, now: the
        process may end before a worker reaches its next step."""
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.end_now(reason)
        self.cancel_all()

    @property
    def active(self) -> int:
        with self._lock:
            return len(self._channels)

    def cancel_all(self) -> None:
        with self._lock:
            channels = list(self._channels.values())
        for channel in channels:
            channel.cancel()


@dataclass
class StreamWorker:
    """Runs one question through the program in a thread and feeds its sink; records how it ended.

    The question is written to the history as running when the worker starts, and closed when it ends: as done or
    failed; as cancelled when its sink is cancelled first, with what its trace holds by then (or, when the program
    was stopped between steps, the question, its scope, its sub-questions and the LM calls made); as cancelled when
    the server stops (`end_now`). A process that dies leaves the row running, which then reads as interrupted.
    `status` and `history_id` are set before `on_done` is called.
    """

    stream_id: str
    question: str
    scope: Scope
    program: ScopedQA
    lm: Any
    adapter: Any
    channel: EventSink
    on_done: Callable[[str], None]
    history: QuestionLog | None = None
    # Counts the question's LM calls (and, holding a StopSignal, refuses every call once it is asked to stop).
    counter: LMCallCounter = field(default_factory=LMCallCounter)
    status: Status | None = None
    history_id: str | None = None
    _sub_questions: tuple[str, ...] = ()
    _started: float = 0.0

    def start(self) -> None:
        self._started = time.perf_counter()
        if self.history is not None:
            try:
                self.history_id = self.history.begin(self._known_trace(0.0))
            except sqlite3.Error:  # the question is answered all the same; only its record is lost
                log.exception("stream %s: the question history could not be written", self.stream_id)
        thread = threading.Thread(target=self._run, name=f"scoperag-stream-{self.stream_id[:8]}", daemon=True)
        thread.start()

    def end_now(self, reason: str) -> None:
        """The server is stopping: the question is cancelled and closed in the history now, with what is known."""
        self.channel.cancel_reason = reason
        self.channel.cancel()
        self._cancelled(None, self._started)

    def _known_trace(self, seconds: float) -> QuestionTrace:
        """What is known of the question before its program's own trace: itself, its scope, its sub-questions and
        the LM calls made."""
        return QuestionTrace(
            question=sanitise_question(self.question).text,
            scope=self.scope.model_dump(mode="json"),
            sub_questions=[SubQuestionTrace(index=i, sub_question=q) for i, q in enumerate(self._sub_questions)],
            lm_calls=self.counter.calls,
            timings={"total": seconds},
        )

    def _run(self) -> None:
        started = self._started or time.perf_counter()
        try:
            self._produce(started)
        except StopRequested:  # the counter refused an LM call: the stop was asked for
            self._cancelled(None, started)
        except Exception:
            log.exception("stream %s failed", self.stream_id)
            self.status = "failed"
            self.channel.put(Failed(message=INTERNAL_ERROR))
        finally:
            if self.status is None:  # the program ended without a last event
                self.status = "failed"
            self.channel.close()
            self.on_done(self.stream_id)
            log.debug("stream %s done (%s)", self.stream_id, self.status)

    def _produce(self, started: float) -> None:
        cancelled = self.channel.cancelled
        # No DSPy trace or LM history: a long-running server would keep the last 10,000 prompts and
        # predictions of every client in memory. The question's own trace comes with its last event.
        lm = CancellableLM(self.lm, cancelled)
        with (
            dspy.context(lm=lm, adapter=self.adapter, trace=None, disable_history=True),
            counting(self.counter),
        ):
            events = self.program.stream(self.question, self.scope)
            try:
                while True:
                    event = None if cancelled.is_set() else next(events, None)
                    if cancelled.is_set():
                        self._cancelled(event, started)
                        return
                    if event is None:
                        return
                    if isinstance(event, Decomposed):
                        self._sub_questions = event.sub_questions
                    if isinstance(event, Completed | Failed):
                        event = self._finish(event)
                    if not self.channel.put(event):
                        if self.status is None:
                            self._cancelled(None, started)
                        return
            finally:
                if isinstance(events, Generator):  # stream() is one: closing it runs its cleanup
                    events.close()

    def _finish(self, event: Completed | Failed) -> Event:
        """The last event, with its history id once the trace it carries is recorded."""
        self.status = "done" if isinstance(event, Completed) else "failed"
        if event.trace is None:
            return event
        self._record(event.trace, final_status(event))  # one stopped at its time bound is recorded so
        if self.history_id is None or isinstance(event, Failed):
            return event
        return event.model_copy(update={"history_id": self.history_id})

    def _cancelled(self, event: Event | None, started: float) -> None:
        """Record the question as cancelled, with the trace its last event carries or what is known of it."""
        self.status = "cancelled"
        trace = event.trace if isinstance(event, Completed | Failed) else None
        if trace is None:
            trace = self._known_trace(time.perf_counter() - started)
        reason = f"{self.channel.cancel_reason}: no LM call started after it ({self.counter.calls} made)"
        trace.interventions.append(Intervention(guard="stop", target="question", reason=reason))
        self._record(trace, "cancelled")

    def _record(self, trace: QuestionTrace, status: Status) -> str | None:
        """Close the question's row (the first to close it decides how it ended); its history id."""
        if self.history is None or self.history_id is None:
            return None
        try:
            self.history.finish(self.history_id, trace, status)
        except sqlite3.Error:  # losing the history entry must not lose the answer
            log.exception("stream %s: the question history could not be written", self.stream_id)
        return self.history_id
