"""The question history: every question's full trace in SQLite, listed and shown by the CLI."""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pipeline.errors import ScopeRagError
from pipeline.program.trace import QuestionTrace, fit_trace

SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    history_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, question TEXT NOT NULL,
    scope TEXT NOT NULL, answer TEXT NOT NULL, lm_calls INTEGER NOT NULL, tokens INTEGER NOT NULL,
    seconds REAL NOT NULL, trace TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_by_time ON history(created_at);
"""


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


class History:
    """Append-only question log in one SQLite file (safe for several processes)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    def record(self, trace: QuestionTrace) -> str:
        """Store `trace` (cut to the trace cap first, see `fit_trace`); returns its new history id."""
        fit_trace(trace)
        history_id = str(uuid.uuid4())
        with self._db:
            self._db.execute(
                "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                ),
            )
        return history_id

    def recent(self, limit: int = 20) -> list[HistoryEntry]:
        """The latest entries, newest first."""
        rows = self._db.execute("SELECT * FROM history ORDER BY created_at DESC, rowid DESC LIMIT ?", (limit,))
        return [self._entry(row) for row in rows]

    def get(self, history_id: str) -> HistoryEntry:
        """One entry by id or unique id prefix; ScopeRagError when there is none."""
        # A prefix compared as text: LIKE would read '%' and '_' in the argument as wildcards.
        rows = self._db.execute(
            "SELECT * FROM history WHERE substr(history_id, 1, ?) = ? ORDER BY created_at DESC LIMIT 2",
            (len(history_id), history_id),
        ).fetchall()
        if len(rows) != 1:
            problem = "no entry" if not rows else "more than one entry"
            raise ScopeRagError(f"{problem} in the history matches '{history_id}'; list them with `scoperag history`")
        return self._entry(rows[0])

    @staticmethod
    def _entry(row: tuple[object, ...]) -> HistoryEntry:
        history_id, created, question, _scope, answer, calls, tokens, seconds, trace = row
        return HistoryEntry(
            str(history_id),
            str(created),
            str(question),
            str(answer),
            int(calls),  # type: ignore[call-overload]
            int(tokens),  # type: ignore[call-overload]
            float(seconds),  # type: ignore[arg-type]
            QuestionTrace.model_validate_json(str(trace)),
        )

    def close(self) -> None:
        self._db.close()
