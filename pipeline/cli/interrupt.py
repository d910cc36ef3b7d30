"""Ctrl-C as a request to stop: the first one asks the work to stop (it says how and keeps what it can), a
second one interrupts at once."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pipeline.cli.common import styled

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.program.calls import StopSignal

# What the first Ctrl-C says when the calls under way finish first (an optimisation job).
FINISH_CALLS = "stopping: no new LM call will start; the calls under way finish first (Ctrl-C again to quit now)"


@contextlib.contextmanager
def stopping_on_interrupt(stop: StopSignal, notices: Console, said: str = FINISH_CALLS) -> Iterator[None]:
    """While inside, the first Ctrl-C prints `said` and asks `stop` to stop (from a thread of its own, so that
    listeners such as marking a run KILLED happen at once whatever the main thread is doing); a second one
    raises KeyboardInterrupt. Outside the main thread nothing is installed."""

    def interrupt(signum: int, frame: object) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        notices.print(styled((said, "yellow")))
        threading.Thread(target=stop.request, name="scoperag-stop").start()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
