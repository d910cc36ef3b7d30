"""Counting LM calls (all, and those the cache did not answer) and stopping a job at its budget.

DSPy's optimizers, its evaluator and the program itself treat every `Exception` raised while an
example runs as that example's failure and carry on, and DSPy logs and swallows `Exception`s raised
by callbacks. The budget stop therefore is `BudgetExhausted`, a `BaseException` (like
KeyboardInterrupt) that passes through all of them; `compile_program` turns it into the project's
`BudgetExceededError` at the boundary.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback
from dspy.utils.usage_tracker import UsageTracker


class BudgetExhausted(BaseException):
    """Control-flow signal: the LM-call budget is spent; no further call is made."""

    def __init__(self, limit: int, calls: int) -> None:
        super().__init__(f"LM-call budget of {limit} reached")
        self.limit = limit
        self.calls = calls


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
    """Counts LM calls as they start (cache hits included) and stops them past `limit`.

    `new_calls` and `tokens` come from usage reports, which DSPy records only for calls the cache
    did not answer: a rerun answered from the cache shows calls > 0 and new_calls == 0.
    """

    def __init__(self, limit: int | None = None, on_call: Callable[[int], None] | None = None) -> None:
        super().__init__()
        self.limit = limit
        self.on_call = on_call
        self.usage = SharedUsage()
        self._lock = threading.Lock()
        self._calls = 0

    @property
    def calls(self) -> int:
        """LM calls attempted (made, answered from cache, or refused by the budget)."""
        return self._calls

    @property
    def new_calls(self) -> int:
        """Calls that reached the model (not answered from the cache) and reported usage."""
        return sum(len(entries) for entries in self.usage.usage_data.values())

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens of the calls that reached the model."""
        total = 0
        for entries in self.usage.usage_data.values():
            for entry in entries:
                total += int(entry.get("prompt_tokens") or 0) + int(entry.get("completion_tokens") or 0)
        return total

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        with self._lock:
            self._calls += 1
            calls = self._calls
        if self.limit is not None and calls > self.limit:
            raise BudgetExhausted(self.limit, calls)
        if self.on_call is not None:
            self.on_call(calls)


@contextlib.contextmanager
def counting(counter: LMCallCounter) -> Iterator[LMCallCounter]:
    """Every LM call inside the block (worker threads included) is counted by `counter`."""
    callbacks = [*(dspy.settings.get("callbacks") or []), counter]
    with dspy.context(callbacks=callbacks, usage_tracker=counter.usage):
        yield counter
