"""A question's time bound: one deadline every stage checks (planner rounds, retrieval, floors, LM calls).

A question that reaches its bound stops where it is and ends with what it has, its sections marked as
errors naming the stage it stopped in. `DeadlinePassed` is a `BaseException`, like the LM-call budget's
stop (pipeline.program.calls.BudgetExhausted): DSPy, its evaluator and every `except Exception` on the way
let it pass, so nothing mistakes the bound for a step's failure and carries on past it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar, copy_context
from typing import TypeVar

Clock = Callable[[], float]
T = TypeVar("T")


class DeadlinePassed(BaseException):
    """Control-flow signal: the question reached its time bound in `stage`; nothing further runs."""

    def __init__(self, stage: str, seconds: float) -> None:
        super().__init__(f"stopped at the question's time bound of {seconds:g} s while {stage}")
        self.stage = stage
        self.seconds = seconds


class Deadline:
    """`seconds` from `started` (or from now) on `clock`; None seconds: no bound (checks never stop)."""

    def __init__(self, seconds: float | None, clock: Clock = time.monotonic, started: float | None = None) -> None:
        self.seconds = seconds
        self.clock = clock
        self.started = clock() if started is None else started

    @property
    def bounded(self) -> bool:
        """Whether there is a bound at all."""
        return self.seconds is not None

    def remaining(self) -> float:
        """Seconds left before the bound (never below 0; infinity without a bound)."""
        if self.seconds is None:
            return math.inf
        return max(0.0, self.started + self.seconds - self.clock())

    @property
    def passed(self) -> bool:
        """Whether the bound is reached."""
        return self.remaining() <= 0.0

    def check(self, stage: str) -> None:
        """Return while time is left; past the bound raise DeadlinePassed naming `stage`."""
        if self.seconds is not None and self.passed:
            raise DeadlinePassed(stage, self.seconds)


def unbounded() -> Deadline:
    """A deadline that never passes (callers that run a step outside a question: stage jobs, tests)."""
    return Deadline(None)


# Seconds the LM call under way may still take (set by pipeline.program.calls.call_once for the thread that makes
# the call): the embedded engine, which DSPy gives no timeout, reads it to run the call where it can be stopped.
_CALL_SECONDS: ContextVar[float | None] = ContextVar("call_seconds", default=None)


def call_seconds() -> float | None:
    """Seconds the LM call under way may take; None when no question bounds it."""
    return _CALL_SECONDS.get()


def run_within(seconds: float, stage: str, bound: float, call: Callable[[], T]) -> T:
    """`call()`'s result, made in a worker thread that may take `seconds` (its LM call told so through
    `call_seconds`); past them DeadlinePassed(`stage`, `bound`) is raised here and the thread is left to end by
    its own timeout. Whatever `call` raises is raised here, unchanged."""
    context = copy_context()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        _CALL_SECONDS.set(seconds)
        try:
            outcome.append(call())
        except BaseException as exc:  # carried to the caller's thread as it is
            failure.append(exc)

    worker = threading.Thread(target=context.run, args=(work,), name=f"lm-call-{stage}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise DeadlinePassed(stage, bound)
    if failure:
        raise failure[0]
    return outcome[0]
