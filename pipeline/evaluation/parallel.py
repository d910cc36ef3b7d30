"""Many items through one function on worker threads: results in input order, progress as each finishes, and a
user's stop honoured at once (the items under way are abandoned, not waited for)."""

from __future__ import annotations

import contextvars
import itertools
import queue
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from pipeline.errors import WorkStopped
from pipeline.program.calls import StopSignal

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[int, int], None]
# How often a waiting caller looks at the stop signal (seconds).
POLL_SECONDS = 0.1
# The worker threads' names: one still alive once the work returned was abandoned by a stop.
WORKER_PREFIX = "scoperag-map-"


def map_in_context(
    function: Callable[[T], R],
    items: Sequence[T],
    threads: int,
    progress: Progress | None = None,
    stop: StopSignal | None = None,
) -> list[R]:
    """`function` applied to every item on `threads` worker threads, results in input order; `progress(done,
    total)` as each item finishes, in whatever order they finish.

    Each item runs in a copy of the caller's context, so dspy.context(lm=...) reaches it. An exception from
    an item is raised here once the items under way have ended (as a thread pool would). Once `stop` is
    requested no item starts, and WorkStopped (carrying the finished results by position) is raised within
    POLL_SECONDS: the items under way are left to end on their own in daemon threads.
    """
    total = len(items)
    contexts = [contextvars.copy_context() for _ in items]
    finished: queue.Queue[tuple[int, R | None, BaseException | None]] = queue.Queue()
    claims = itertools.count()
    claim = threading.Lock()

    def work() -> None:
        while stop is None or not stop.requested:
            with claim:
                index = next(claims)
            if index >= total:
                return
            try:
                finished.put((index, contexts[index].run(function, items[index]), None))
            except BaseException as exc:  # handed to the caller, which raises it
                finished.put((index, None, exc))
                return

    count = max(1, min(threads, total))
    workers = [threading.Thread(target=work, name=f"{WORKER_PREFIX}{i}", daemon=True) for i in range(count)]
    for worker in workers:
        worker.start()
    results: dict[int, R] = {}
    while len(results) < total:
        try:
            index, result, error = finished.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if stop is not None and stop.requested:
                raise WorkStopped(dict(results), total) from None
            continue
        if error is not None:
            if stop is not None and stop.requested:
                raise WorkStopped(dict(results), total) from None
            for worker in workers:
                worker.join()
            raise error
        results[index] = result  # type: ignore[assignment]
        if progress is not None:
            progress(len(results), total)
    return [results[i] for i in range(total)]
