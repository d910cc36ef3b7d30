"""What one server instance holds: the store, the LM, the program now serving, limits and running streams.

One `ServingState` per app, created by `create_app`; nothing here is module-global.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pipeline.evaluation.history import History, HistoryEntry, Status
from pipeline.export import ExportManifest
from pipeline.export.profiles import ProfilePaths
from pipeline.program.module import ScopedQA
from pipeline.program.trace import QuestionTrace
from pipeline.serving.jobs import JobBoard
from pipeline.serving.schemas import ProgramInfo
from pipeline.serving.streaming import StreamRegistry
from pipeline.store import Store


@dataclass(frozen=True)
class ServingProgram:
    """A program and where it came from; replaced as a whole, so a stream keeps the one it started with."""

    program: ScopedQA
    manifest: ExportManifest | None = None
    profile: str | None = None

    def info(self) -> ProgramInfo | Literal["uncompiled"]:
        return "uncompiled" if self.manifest is None else program_info(self.manifest, self.profile)


def program_info(manifest: ExportManifest, profile: str | None) -> ProgramInfo:
    """What GET /v1/health tells about an exported program."""
    return ProgramInfo(
        profile=profile,
        created_at=manifest.created_at,
        run_id=manifest.run_id,
        trainset_hash=manifest.trainset_hash,
        lm=manifest.versions.lm,
    )


class LockedHistory:
    """The question history shared by every stream's thread: one write at a time; entries are recorded as
    answered by `lm` and asked of `index` (the index this server serves), and listed for it unless `every`."""

    def __init__(self, path: Path, lm: str | None = None, index: str | None = None) -> None:
        self._history = History(path)
        self._lock = threading.Lock()
        self.lm = lm
        self.index = index

    def record(self, trace: QuestionTrace, status: Status = "done") -> str:
        with self._lock:
            return self._history.record(trace, status=status, lm=self.lm, index=self.index)

    def begin(self, trace: QuestionTrace) -> str:
        with self._lock:
            return self._history.begin(trace, lm=self.lm, index=self.index)

    def finish(self, history_id: str, trace: QuestionTrace, status: Status) -> bool:
        with self._lock:
            return self._history.finish(history_id, trace, status)

    def recent(
        self,
        limit: int,
        *,
        containing: str | None = None,
        lm: str | None = None,
        status: Status | None = None,
        every: bool = False,
    ) -> list[HistoryEntry]:
        """The latest entries of this server's index (of every index with `every`)."""
        index = None if every else self.index
        with self._lock:
            return self._history.recent(limit, containing=containing, lm=lm, status=status, index=index)

    def get(self, history_id: str) -> HistoryEntry:
        with self._lock:
            return self._history.get(history_id)

    def close(self) -> None:
        with self._lock:
            self._history.close()


@dataclass
class LabelFile:
    """The traces file labels are appended to, one append at a time."""

    path: Path
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Limits:
    """Request limits; `max_question_chars` can only tighten the schema's 2,000."""

    max_body_bytes: int
    max_question_chars: int
    max_concurrent_streams: int
    heartbeat_seconds: float


@dataclass
class ServingState:
    """Everything the routes of one app share."""

    store: Store
    lm: Any
    adapter: Any
    limits: Limits
    current: ServingProgram
    registry: StreamRegistry
    profiles: ProfilePaths | None = None
    history: LockedHistory | None = None
    # The folder the index was built from: cited pages are then shown from their original files.
    corpus: Path | None = None
    # Serialises profile changes (activate, import) against each other; streams never wait on it.
    profile_lock: threading.Lock = field(default_factory=threading.Lock)
    # Questions answered in the background (POST /v1/jobs).
    jobs: JobBoard = field(default_factory=JobBoard)
    # Where labels made on the page are appended (serve --label-to); None: labels are not saved here.
    labels: LabelFile | None = None
    # The MLflow tracking server the page links runs to (serve --tracking-uri), when it is one.
    tracking: str | None = None

    @property
    def lm_name(self) -> str:
        return lm_name(self.lm)


def lm_name(lm: Any) -> str:
    """What the server calls its LM: the model string, else the LM's class name."""
    return str(getattr(lm, "model", None) or type(lm).__name__)
