"""The question history: every question's full trace in SQLite, with how it ended, the LM that answered it and the
index it was asked of, listed and shown by the CLI and the server (each listing the questions of its own index
unless asked for all).

The server writes a question as "running" when it starts (`begin`) and closes its row when it ends (`finish`):
a question under way when the server stops is closed as cancelled, and one whose server died before closing it
reads as "interrupted" (its writer, a process of this machine, is gone)."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pipeline.errors import ScopeRagError
from pipeline.files import host_tag, process_alive, process_start
from pipeline.program.events import Completed, Failed
from pipeline.program.trace import QuestionTrace, fit_trace

SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    history_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, question TEXT NOT NULL,
    scope TEXT NOT NULL, answer TEXT NOT NULL, lm_calls INTEGER NOT NULL, tokens INTEGER NOT NULL,
    seconds REAL NOT NULL, trace TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_by_time ON history(created_at);
"""
# Columns added after the first release: an older file gets them on open (empty for its old rows).
ADDED_COLUMNS = (("status", "TEXT"), ("lm", "TEXT"), ("writer", "TEXT"), ("index_dir", "TEXT"))
COLUMNS = "history_id, created_at, question, answer, lm_calls, tokens, seconds, trace, status, lm, writer, index_dir"
# How a question ended ("stopped": at its time bound, with what it had by then).
Status = Literal["done", "failed", "cancelled", "stopped"]
STATUSES: tuple[Status, ...] = ("done", "failed", "cancelled", "stopped")
# How a row reads: ended, still running, or left running by a writer that is gone.
RowStatus = Literal["done", "failed", "cancelled", "stopped", "running", "interrupted"]


@dataclass(frozen=True)
class HistoryEntry:
    """One recorded question; `trace` is the validated QuestionTrace."""

    history_id: str
    created_at: str
    question: str
    answer: str
    lm_calls: int
    tokens: int
    seconds: float
    trace: QuestionTrace
    # done (answered, asked back or refused), failed (the LM or the program failed), cancelled (stopped by the user or
    # the server stopping), stopped (at its time bound: each unfinished section says the stage it stopped in),
    # running (under way), interrupted (its server ended without closing it: a crash)
    status: RowStatus = "done"
    # the LM that answered (as the server names it); None when not recorded
    lm: str | None = None
    # the index the question was asked of (its directory, resolved); None for questions recorded before indexes were
    index: str | None = None


def index_key(index_dir: Path) -> str:
    """How the history names an index: its directory, resolved (one index, however its path was written)."""
    return str(Path(index_dir).resolve())


def final_status(final: Completed | Failed) -> Status:
    """How a question whose last event is `final` ended: failed, stopped at its time bound (its trace records the
    deadline), or done."""
    if isinstance(final, Failed):
        return "failed"
    trace = final.trace
    return "stopped" if trace is not None and any(f.guard == "deadline" for f in trace.fallbacks) else "done"


def recorded_status(stored: object, trace: QuestionTrace, writer: object = None) -> RowStatus:
    """A row's status; a row written before statuses were kept failed when its trace records the LM failing; a
    running row whose writer is gone was interrupted."""
    if stored in STATUSES:
        return stored  # type: ignore[return-value]
    if stored == "running":
        return "running" if writer_alive(writer) else "interrupted"
    return "failed" if any(f.guard == "lm" for f in trace.fallbacks) else "done"


def this_writer() -> str:
    """This process as a row's writer: "host:pid:start"."""
    return f"{host_tag()}:{os.getpid()}:{process_start(os.getpid()) or ''}"


def writer_alive(writer: object) -> bool:
    """Whether the process that wrote a row may still run (another machine's counts as running)."""
    host, _, rest = str(writer or "").partition(":")
    pid, _, start = rest.partition(":")
    if not pid.isdigit():
        return False
    return process_alive(host, int(pid), start or None)


class History:
    """Append-only question log in one SQLite file (safe for several processes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._add_columns()

    def _add_columns(self) -> None:
        have = {str(row[1]) for row in self._db.execute("PRAGMA table_info(history)")}
        for name, kind in ADDED_COLUMNS:
            if name in have:
                continue
            try:
                with self._db:
                    self._db.execute(f"ALTER TABLE history ADD COLUMN {name} {kind}")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc):
                    raise

    def record(
        self, trace: QuestionTrace, *, status: Status = "done", lm: str | None = None, index: str | None = None
    ) -> str:
        """Store `trace` (cut to the trace cap first, see `fit_trace`) with how the question ended, the LM that
        answered and the index it was asked of; returns its new history id."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        fit_trace(trace)
        history_id = str(uuid.uuid4())
        with self._db:
            self._db.execute(
                "INSERT INTO history (history_id, created_at, question, scope, answer, lm_calls, tokens, seconds, "
                "trace, status, lm, index_dir) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    history_id,
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    trace.question,
                    json.dumps(trace.scope),
                    trace.answer,
                    trace.lm_calls,
                    trace.tokens,
                    trace.timings.get("total", 0.0),
                    trace.model_dump_json(),
                    status,
                    lm,
                    index,
                ),
            )
        return history_id

    def begin(self, trace: QuestionTrace, *, lm: str | None = None, index: str | None = None) -> str:
        """Store a question that starts now as "running" (its trace so far), written by this process and asked of
        `index`; returns its history id, which `finish` closes."""
        fit_trace(trace)
        history_id = str(uuid.uuid4())
        with self._db:
            self._db.execute(
                "INSERT INTO history (history_id, created_at, question, scope, answer, lm_calls, tokens, seconds, "
                "trace, status, lm, writer, index_dir) VALUES (?, ?, ?, ?, ?, 0, 0, 0, ?, 'running', ?, ?, ?)",
                (
                    history_id,
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    trace.question,
                    json.dumps(trace.scope),
                    trace.answer,
                    trace.model_dump_json(),
                    lm,
                    this_writer(),
                    index,
                ),
            )
        return history_id

    def finish(self, history_id: str, trace: QuestionTrace, status: Status) -> bool:
        """Close a running question with its trace and how it ended; False when it was closed already (the first
        to close it, the question's end or the server's, decides)."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        fit_trace(trace)
        with self._db:
            changed = self._db.execute(
                "UPDATE history SET question = ?, answer = ?, lm_calls = ?, tokens = ?, seconds = ?, trace = ?, "
                "status = ? WHERE history_id = ? AND status = 'running'",
                (
                    trace.question,
                    trace.answer,
                    trace.lm_calls,
                    trace.tokens,
                    trace.timings.get("total", 0.0),
                    trace.model_dump_json(),
                    status,
                    history_id,
                ),
            ).rowcount
        return bool(changed)

    def recent(
        self,
        limit: int = 20,
        *,
        containing: str | None = None,
        lm: str | None = None,
        status: Status | None = None,
        index: str | None = None,
    ) -> list[HistoryEntry]:
        """The latest entries, newest first; only those whose question holds `containing` (ignoring the case of
        ASCII letters), answered by `lm`, ending with `status`, or asked of `index`, when given."""
        where, values = [], []
        if index is not None:
            where.append("index_dir = ?")
            values.append(index)
        if containing:
            where.append("instr(lower(question), lower(?)) > 0")
            values.append(containing)
        if lm is not None:
            where.append("lm = ?")
            values.append(lm)
        if status is not None:
            where.append("status = ?")
            values.append(status)
        condition = f"WHERE {' AND '.join(where)} " if where else ""
        rows = self._db.execute(
            f"SELECT {COLUMNS} FROM history {condition}ORDER BY created_at DESC, rowid DESC LIMIT ?", (*values, limit)
        )
        return [self._entry(row) for row in rows]

    def elsewhere(self, index: str) -> tuple[int, int]:
        """(questions recorded of other indexes, questions recorded before indexes were): what a listing of
        `index` leaves out."""
        other, unknown = self._db.execute(
            "SELECT COALESCE(SUM(index_dir IS NOT NULL AND index_dir != ?), 0), COALESCE(SUM(index_dir IS NULL), 0) "
            "FROM history",
            (index,),
        ).fetchone()
        return int(other), int(unknown)

    def get(self, history_id: str) -> HistoryEntry:
        """One entry by id or unique id prefix; ScopeRagError when there is none."""
        # A prefix compared as text: LIKE would read '%' and '_' in the argument as wildcards.
        rows = self._db.execute(
            f"SELECT {COLUMNS} FROM history WHERE substr(history_id, 1, ?) = ? ORDER BY created_at DESC LIMIT 2",
            (len(history_id), history_id),
        ).fetchall()
        if len(rows) != 1:
            problem = "no entry" if not rows else "more than one entry"
            raise ScopeRagError(f"{problem} in the history matches '{history_id}'; list them with `scoperag history`")
        return self._entry(rows[0])

    @staticmethod
    def _entry(row: tuple[object, ...]) -> HistoryEntry:
        history_id, created, question, answer, calls, tokens, seconds, trace, status, lm, writer, index = row
        parsed = QuestionTrace.model_validate_json(str(trace))
        return HistoryEntry(
            str(history_id),
            str(created),
            str(question),
            str(answer),
            int(calls),  # type: ignore[call-overload]
            int(tokens),  # type: ignore[call-overload]
            float(seconds),  # type: ignore[arg-type]
            parsed,
            recorded_status(status, parsed, writer),
            None if lm is None else str(lm),
            None if index is None else str(index),
        )

    def close(self) -> None:
        self._db.close()
