"""LM calls: counting them (all, and those the cache did not answer), stopping at a budget, and one
program step's single guarded call.

DSPy's optimizers, its evaluator and the program itself treat every `Exception` raised while an
example runs as that example's failure and carry on, and DSPy logs and swallows `Exception`s raised
by callbacks. The budget stop therefore is `BudgetExhausted`, a `BaseException` (like
KeyboardInterrupt) that passes through all of them; callers turn it into `BudgetExceededError`.
A user's stop (Ctrl-C, `StopSignal`) travels the same way as `StopRequested`.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback
from dspy.utils.exceptions import is_retryable_lm_error
from dspy.utils.usage_tracker import UsageTracker

from pipeline.deadline import Deadline, run_within, unbounded
from pipeline.errors import LMFailure, ModelError
from pipeline.settings import LMRequestSettings

log = logging.getLogger(__name__)


class BudgetExhausted(BaseException):
    """Control-flow signal: the LM-call budget is spent; no further call is made."""

    def __init__(self, limit: int, calls: int) -> None:
        super().__init__(f"LM-call budget of {limit} reached")
        self.limit = limit
        self.calls = calls


class StopRequested(BaseException):
    """Control-flow signal: the user asked the work to stop (Ctrl-C); no further LM call is made."""

    def __init__(self, calls: int) -> None:
        super().__init__(f"stop requested: LM call {calls} was not made")
        self.calls = calls


class StopSignal:
    """Asked once (Ctrl-C) to stop a job at its next LM-call boundary: counters holding it refuse every later
    call, and its listeners (e.g. marking the MLflow run KILLED) run at once, in the asking thread."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    @property
    def requested(self) -> bool:
        """True once `request` was called."""
        return self._event.is_set()

    def request(self) -> None:
        """Stop: later LM calls are refused; each listener runs once (a failing one does not stop the others)."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:  # best effort: the stop itself must happen whatever a listener does
                log.exception("a stop listener failed")

    def listen(self, listener: Callable[[], None]) -> None:
        """Run `listener` when the stop is requested."""
        with self._lock:
            self._listeners.append(listener)

    def forget(self, listener: Callable[[], None]) -> None:
        """Stop listening (the job the listener served has ended)."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)


class SharedUsage(UsageTracker):
    """A usage tracker every worker thread shares: DSPy deep-copies the tracker per thread, this one returns itself."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedUsage:
        return self

    def add_usage(self, lm: str, usage_entry: dict[str, Any]) -> None:
        with self._lock:
            super().add_usage(lm, usage_entry)


class LMCallCounter(BaseCallback):
    """Counts LM calls as they start (cache hits included) and, with a `limit`, stops them past it.

    `new_calls` and `tokens` come from usage reports, which DSPy records only for calls the cache
    did not answer (while `counting` is active): a rerun answered from the cache shows calls > 0 and
    new_calls == 0.
    """

    def __init__(
        self, limit: int | None = None, on_call: Callable[[int], None] | None = None, stop: StopSignal | None = None
    ) -> None:
        super().__init__()
        self.limit = limit
        self.on_call = on_call
        self.stop = stop
        self.usage = SharedUsage()
        self._lock = threading.Lock()
        self._calls = 0
        self._remote_calls = 0
        self._remote_tokens = 0

    @property
    def calls(self) -> int:
        """LM calls attempted (made, answered from cache, or refused by the budget)."""
        return self._calls + self._remote_calls

    @property
    def new_calls(self) -> int:
        """Calls that reached the model (not answered from the cache) and reported usage."""
        return sum(len(entries) for entries in self.usage.usage_data.values()) + self._remote_calls

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens of the calls that reached the model."""
        return sum(prompt + completion for prompt, completion in usage_tokens(self.usage)) + self._remote_tokens

    def add_remote(self, calls: int, tokens: int) -> None:
        """Count calls that other processes (Ray workers) made, as their question traces report them."""
        with self._lock:
            self._remote_calls += calls
            self._remote_tokens += tokens

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        if self.stop is not None and self.stop.requested:  # refused before it starts: not a call
            raise StopRequested(self._calls + 1)
        with self._lock:
            self._calls += 1
            calls = self._calls
        if self.limit is not None and calls > self.limit:
            raise BudgetExhausted(self.limit, calls)
        if self.on_call is not None:
            self.on_call(calls)


def usage_tokens(tracker: UsageTracker) -> Iterator[tuple[int, int]]:
    """(prompt tokens, completion tokens) of every usage entry a tracker holds."""
    for entries in tracker.usage_data.values():
        for entry in entries:
            yield int(entry.get("prompt_tokens") or 0), int(entry.get("completion_tokens") or 0)


@contextlib.contextmanager
def counting(counter: LMCallCounter) -> Iterator[LMCallCounter]:
    """Every LM call inside the block (worker threads included) is counted by `counter`."""
    callbacks = [*(dspy.settings.get("callbacks") or []), counter]
    with dspy.context(callbacks=callbacks, usage_tracker=counter.usage):
        yield counter


def one_call_settings(counter: LMCallCounter) -> dict[str, Any]:
    """dspy settings for one step: `counter` listening, and at most one LM call.

    ChatAdapter retries an unparseable completion through JSONAdapter, a second call the step's
    budget has no room for; the program has its own fallback for unparseable output instead.
    """
    settings: dict[str, Any] = {"callbacks": [*dspy.settings.get("callbacks", []), counter]}
    adapter = dspy.settings.adapter
    retries = not isinstance(adapter, dspy.JSONAdapter) and getattr(adapter, "use_json_adapter_fallback", False)
    if isinstance(adapter, dspy.ChatAdapter) and retries:
        single = copy.copy(adapter)
        single.use_json_adapter_fallback = False
        settings["adapter"] = single
    elif adapter is None:
        settings["adapter"] = dspy.ChatAdapter(use_json_adapter_fallback=False)
    return settings


@dataclass(frozen=True)
class CallOutcome:
    """One step's LM call: its prediction (None when unparseable), attempts made, tokens, seconds, the
    error of each failed attempt that was retried, and whether DSPy's cache answered it (no usage reported:
    no tokens were spent and `seconds` measures the cache, not the model)."""

    prediction: Any
    unparseable: str | None
    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    retried: tuple[str, ...] = ()
    cached: bool = False


# A server's Retry-After is honoured up to this many seconds: a compromised one cannot park a question.
MAX_RETRY_AFTER_SECONDS = 30.0


def call_once(
    name: str,
    predictor: dspy.Predict,
    max_tokens: int,
    requests: LMRequestSettings | None = None,
    deadline: Deadline | None = None,
    **inputs: Any,
) -> CallOutcome:
    """Run `predictor` for one step; an unparseable output is an outcome, any other failure LMFailure.

    A transient failure (dropped connection, timeout, HTTP 429 or 5xx) is retried up to
    `requests.retries` times; every attempt is an LM call, counted in `calls` (and by any
    LMCallCounter listening, so a budget stops retries too). Under a bounded `deadline` each attempt may
    take what is left of it, the call's thread is told so (the embedded model then runs the call where a
    timeout stops it), and past it DeadlinePassed names the step: no attempt or retry starts after it.
    """
    requests = requests or LMRequestSettings()
    deadline = deadline or unbounded()
    stage = f"waiting for the LM ({name})"
    started = time.perf_counter()
    counter = LMCallCounter()
    prediction = None
    unparseable = None
    retried: list[str] = []
    tokens: list[tuple[int, int]] = []
    cached = False
    while True:
        deadline.check(stage)
        usage = UsageTracker()
        try:
            with dspy.context(**one_call_settings(counter)), dspy.track_usage() as usage:
                if deadline.seconds is None:
                    prediction = predictor(**inputs, config={"max_tokens": max_tokens})
                else:
                    prediction = run_within(
                        deadline.remaining(),
                        stage,
                        deadline.seconds,
                        lambda: predictor(**inputs, config={"max_tokens": max_tokens}),
                    )
            answered = list(usage_tokens(usage))
            # DSPy records usage only for calls its cache did not answer (the same rule as LMCallCounter.new_calls).
            cached = not answered
            tokens.extend(answered)
            break
        except Exception as exc:  # unparseable output falls back; a transient failure is retried; the rest fail
            root: BaseException = exc
            while root.__cause__ is not None:
                root = root.__cause__
            # json_repair gives up on deeply nested output ("{{{{...") with a ValueError from a
            # RecursionError that DSPy does not wrap: that output is unparseable, the LM did answer.
            if isinstance(exc, dspy.utils.exceptions.AdapterParseError) or isinstance(root, RecursionError):
                unparseable = f"unparseable: {exc!s:.300}"
                break
            transient = _transient(exc)
            if transient is not None and len(retried) < requests.retries:
                retried.append(type(transient).__name__)
                time.sleep(min(_retry_delay(requests, len(retried), transient), deadline.remaining()))
                continue
            deadline.check(stage)  # a call cut short by the bound is the bound's stop, not the LM's failure
            raise LMFailure(
                f"{name}: {type(exc).__name__}: {exc}",
                public=_public_failure(name, root),
                calls=max(1 + len(retried), counter.calls),
                retried=tuple(retried),
            ) from exc
    return CallOutcome(
        prediction=prediction,
        unparseable=unparseable,
        calls=max(1 + len(retried), counter.calls),
        prompt_tokens=sum(p for p, _ in tokens),
        completion_tokens=sum(c for _, c in tokens),
        seconds=time.perf_counter() - started,
        retried=tuple(retried),
        cached=cached,
    )


def _public_failure(name: str, root: BaseException) -> str:
    """What a failed call may tell whoever asked: the step and the error's type (its text may name endpoints),
    and for an embedded model that could not be loaded on its first call, the way to repair it."""
    if isinstance(root, ModelError):
        return f"{name}: the embedded model could not be loaded: {root.fix}"
    return f"{name}: {type(root).__name__}"


def _transient(exc: BaseException) -> Exception | None:
    """The retryable LM error in `exc`'s chain of causes, if there is one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, Exception) and is_retryable_lm_error(current):
            return current
        current = current.__cause__ or current.__context__
    return None


def _retry_delay(requests: LMRequestSettings, retry: int, error: Exception) -> float:
    """Seconds to wait before retry number `retry` (1-based): exponential backoff, or the server's Retry-After."""
    delay = float(requests.backoff_seconds * 2 ** (retry - 1))
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, int | float) and retry_after > 0:
        delay = max(delay, min(float(retry_after), MAX_RETRY_AFTER_SECONDS))
    return delay
