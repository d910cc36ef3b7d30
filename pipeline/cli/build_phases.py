"""The time and peak memory of each phase of an index build, for the line `scoperag index` ends with.

Phases follow the build's progress updates: "read" until every file is read, "embed" for what is left of
embedding after that, then each step of "index" (dense index, BM25, page index, publish). Memory is the
resident set of this process and its reading processes together, sampled every SAMPLE_SECONDS.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

SAMPLE_SECONDS = 0.25
_COUNT = re.compile(r"\b[\d,]+ ")
Update = Callable[..., None]


@dataclass
class Phase:
    """One phase: its name, when it started and ended (monotonic seconds), its peak RSS in MB."""

    name: str
    started: float
    ended: float
    peak_mb: float = 0.0

    @property
    def seconds(self) -> float:
        return self.ended - self.started


def phase_of(stage: str, note: str, reading_done: bool) -> str:
    """The phase a progress update belongs to: "read", "embed" (once reading is done), or an index step's
    note without its counts ("dense index of chunks", "BM25 of documents", "publish")."""
    if stage == "read" or (stage == "embed" and not reading_done):
        return "read"
    if stage != "index":
        return stage
    return _COUNT.sub("", note.split(" (")[0])


class BuildPhases:
    """A progress callback (forwarding every update to `forward`) that times each phase and samples memory;
    use as a context manager around the build."""

    def __init__(self, forward: Update | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.forward = forward
        self.clock = clock
        self.phases: list[Phase] = []
        self._reading_done = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, name="build-memory", daemon=True)
        self.started = clock()

    def __enter__(self) -> BuildPhases:
        self._sampler.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stop.set()
        self._sampler.join()
        with self._lock:
            if self.phases:
                self.phases[-1].ended = self.clock()

    def __call__(
        self, stage: str, done: int, total: int | None, note: str = "", rate_of: tuple[int, str] | None = None
    ) -> None:
        if self.forward is not None:
            self.forward(stage, done, total, note, rate_of=rate_of)
        with self._lock:
            if stage == "index" and note == "published":
                return
            now = self.clock()
            if not self.phases:  # finding the files, hashing them, asking the caches what they hold
                self.phases.append(Phase("start", self.started, now, tree_rss_mb()))
            self._enter(phase_of(stage, note, self._reading_done), now)
            if stage == "read" and total is not None and done >= total and not self._reading_done:
                # the last file is read: what embedding still has to do from here on is its own phase
                self._reading_done = True
                self._enter("embed", now)

    def _enter(self, name: str, now: float) -> None:
        """`name` is the phase from `now` on (the one before it ends there)."""
        self.phases[-1].ended = now
        if self.phases[-1].name != name:
            self.phases.append(Phase(name, now, now, tree_rss_mb()))

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            mb = tree_rss_mb()
            with self._lock:
                if self.phases:
                    self.phases[-1].peak_mb = max(self.phases[-1].peak_mb, mb)

    def line(self) -> str:
        """ "phases: read 68.5 s (peak 917 MB), embed 40.8 s (920 MB), ...; peak 920 MB" for the build's end."""
        with self._lock:
            parts = [f"{p.name} {p.seconds:.1f} s ({p.peak_mb:,.0f} MB)" for p in self.phases]
            peak = max((p.peak_mb for p in self.phases), default=0.0)
        return f"phases (time, peak memory with the reading processes): {', '.join(parts)}; peak {peak:,.0f} MB"

    def record(self) -> list[dict[str, float | str]]:
        """Each phase as JSON: name, seconds, peak_rss_mb."""
        with self._lock:
            return [
                {"phase": p.name, "seconds": round(p.seconds, 2), "peak_rss_mb": round(p.peak_mb)} for p in self.phases
            ]


def tree_rss_mb(root: str = "self") -> float:
    """Resident MB of a process (this one by default) and all its descendants (0 where /proc cannot tell)."""
    total_kb, pending = 0, [root]
    while pending:
        pid = pending.pop()
        total_kb += _rss_kb(pid)
        pending.extend(_children(pid))
    return total_kb / 1024


def _rss_kb(pid: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _children(pid: str) -> list[str]:
    found: list[str] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found.extend((task / "children").read_text().split())
    except OSError:
        pass
    return found
