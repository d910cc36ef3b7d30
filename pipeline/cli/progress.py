"""Progress of long commands: a live bar on a terminal, plain dated lines anywhere else.

Rich draws nothing until the end when its console is not a terminal (CI logs, `| tee`, nohup),
so a 20-minute build looked hung, while a one-second build printed a hundred lines. Off a terminal
at most one line is printed every `every` seconds (5), none in the first ones (a quick command
prints only its result): a stage's line when it starts, reaches a new tenth, or every
HEARTBEAT_SECONDS while it lasts, and its last state when the work ends. A stage that says what it
counts (pages, chunks, examples) also shows its rate and, while its total is known, the time left.
"""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

# Off a terminal, a stage whose tenth does not change still prints a line this often.
HEARTBEAT_SECONDS = 30.0


class StageProgress:
    """`update(stage, done, total, note)` from any number of stages; use as a context manager."""

    def __init__(self, console: Console, every: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.every = every
        self.clock = clock
        self._bar: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._printed: dict[str, tuple[float, int, bool]] = {}  # stage -> (time, tenth, finished) of its last line
        self._latest: tuple[str, str] | None = None  # (stage, line) of the last update, unless printed
        self._done: dict[str, int] = {}  # stage -> most done so far (updates from threads may arrive late)
        self._began: dict[str, float] = {}  # stage -> when its first update came
        self._eta: str | None = None  # the whole work's ETA, when one is given (then no stage shows its own)
        self._eta_task: TaskID | None = None
        self._started = clock()
        self._last_line = self._started
        self._lock = threading.Lock()
        if console.is_terminal:
            self._bar = Progress(
                TextColumn("{task.description:>9}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[note]}", markup=False),  # a note may quote data: never markup
                TimeElapsedColumn(),
                console=console,
            )

    def __enter__(self) -> StageProgress:
        if self._bar is not None:
            self._bar.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, value, traceback)
            return
        # The work's last state, unless a line was printed too recently (the command's result follows).
        if self._latest is not None and self.clock() - self._last_line >= self.every:
            self._print(self._latest[1])

    def job_eta(self, text: str) -> None:
        """The whole work's ETA is now `text` (shown in one place; stages then show their rate, not an ETA)."""
        with self._lock:
            self._eta = text
            if self._bar is None:
                return
            if self._eta_task is None:
                self._eta_task = self._bar.add_task("job", total=None, note=text)
            self._bar.update(self._eta_task, note=text)

    def update(
        self, stage: str, done: int, total: int | None, note: str = "", rate_of: tuple[int, str] | None = None
    ) -> None:
        """Show `done` of `total`; `rate_of` = (count, unit) adds "N unit/s" and (without a job ETA) the time left
        to `note`."""
        with self._lock:
            now = self.clock()
            done = self._done[stage] = max(done, self._done.get(stage, 0))
            began = self._began.setdefault(stage, now)
            if rate_of is not None:
                rate = rate_line(rate_of, done, None if self._eta is not None else total, now - began)
                note = " ".join(part for part in (note, rate) if part)
            if self._bar is not None:
                if stage not in self._tasks:
                    self._tasks[stage] = self._bar.add_task(stage, total=total, note=note)
                self._bar.update(self._tasks[stage], completed=done, total=total, note=note)
                return
            count = f"{done}/{total}" if total else str(done)
            line = f"{stage}: {count} {note}".rstrip()
            if self._eta:
                line = f"{line}; {self._eta}"
            finished = total is not None and done >= total
            tenth = 10 if finished else done * 10 // total if total else 0
            last = self._printed.get(stage)
            news = last is None or tenth != last[1] or (finished and not last[2]) or now - last[0] >= HEARTBEAT_SECONDS
            if not news or now - self._last_line < self.every:
                self._latest = (stage, line) if last is None or not last[2] else None
                return
            self._printed[stage] = (now, tenth, finished)
            self._latest = None
            self._print(line)

    def _print(self, line: str) -> None:
        now = self.clock()
        self._last_line = now
        elapsed = time.strftime("%H:%M:%S", time.gmtime(now - self._started))
        self.console.print(f"[{elapsed}] {line}", highlight=False, markup=False, soft_wrap=True)


def rate_line(rate_of: tuple[int, str], done: int, total: int | None, seconds: float) -> str:
    """ "(N unit/s, ETA m:ss)": the rate of `rate_of`'s count (below one a second: seconds per unit), the time
    left from done/total so far."""
    count, unit = rate_of
    if seconds <= 0 or count <= 0:
        return ""
    rate = count / seconds
    if rate >= 10:
        parts = [f"{rate:,.0f} {unit}/s"]
    elif rate >= 1:
        parts = [f"{rate:.1f} {unit}/s"]
    else:
        parts = [f"{1 / rate:,.0f} s per {unit.removesuffix('s')}"]
    if total and 0 < done < total:
        left = seconds * (total - done) / done
        parts.append(f"ETA {clock_time(left)}")
    return f"({', '.join(parts)})"


def clock_time(seconds: float) -> str:
    """`seconds` as m:ss (h:mm:ss past an hour), for an ETA."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class StageLine:
    """The stage one piece of work is in and the time since it began: a live line (spinner, stage, elapsed)
    on a terminal; anywhere else one dated line per stage, repeated every `every` seconds while a stage
    lasts (an LM call can take minutes). `stage(text)` moves it on; a context manager."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic, every: float = 30.0) -> None:
        self.console = console
        self.clock = clock
        self.every = every
        self.started = clock()
        self._live: Progress | None = None
        self._task: TaskID | None = None
        self._current: str | None = None
        self._changed = threading.Event()
        self._done = threading.Event()
        self._ticker: threading.Thread | None = None
        if console.is_terminal:
            self._live = Progress(
                SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(), console=console
            )

    def __enter__(self) -> StageLine:
        if self._live is not None:
            self._live.__enter__()
        else:
            self._ticker = threading.Thread(target=self._tick, name="stage-line", daemon=True)
            self._ticker.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._done.set()
        self._changed.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._live is not None:
            self._live.__exit__(kind, value, traceback)

    @property
    def elapsed(self) -> float:
        """Seconds since the work began."""
        return self.clock() - self.started

    def stage(self, text: str) -> None:
        """Show that the work is now at `text` (plain text, never markup)."""
        self._current = text
        if self._live is not None:
            if self._task is None:
                self._task = self._live.add_task(text, total=None)
            self._live.update(self._task, description=text)
            return
        self._print(text)
        self._changed.set()

    def _tick(self) -> None:
        """Off a terminal: the current stage again after every `every` seconds without a new one."""
        while not self._done.is_set():
            if self._changed.wait(self.every):
                self._changed.clear()
                continue
            if self._current is not None and not self._done.is_set():
                self._print(f"still {self._current}")

    def _print(self, text: str) -> None:
        when = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")
        self.console.print(f"{when} [+{self.elapsed:.0f} s] {text}", highlight=False, markup=False, soft_wrap=True)


class LibraryOutput(io.TextIOBase):
    """A stdout for libraries that print their own progress (DSPy's optimizers and evaluator): each finished
    line goes to `log` at INFO (shown with -v), a progress bar's redraws ("\\r") keep only their last state,
    so the command's own display is the only one on the terminal."""

    def __init__(self, log: logging.Logger) -> None:
        super().__init__()
        self.log = log
        self._pending = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            shown = line.rsplit("\r", 1)[-1].strip()
            if shown:
                self.log.info("%s", shown)
        return len(text)

    def flush(self) -> None:
        """Nothing is held but an unfinished line, which waits for its end."""
