"""The question history: how each question ended and which LM answered it, search over questions, and files
written before either was kept."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli.main import main
from pipeline.evaluation.history import History
from pipeline.program.trace import Intervention, QuestionTrace

ROOT = Path(__file__).resolve().parents[2]

NO_SCOPE = {"kind": "no_scope"}


def test_status_and_lm_are_kept_and_filter_the_list(tmp_path: Path) -> None:
    history = History(tmp_path / "history.sqlite")
    done = history.record(QuestionTrace(question="What is the rent at Banda Lane?", scope=NO_SCOPE), lm="a")
    failed = history.record(QuestionTrace(question="Who is the tenant?", scope=NO_SCOPE), status="failed", lm="a")
    stopped = history.record(QuestionTrace(question="What is the RENT?", scope=NO_SCOPE), status="cancelled", lm="b")
    assert [(e.history_id, e.status, e.lm) for e in history.recent()] == [
        (stopped, "cancelled", "b"),
        (failed, "failed", "a"),
        (done, "done", "a"),
    ]
    assert [e.history_id for e in history.recent(containing="rent")] == [stopped, done]  # ASCII case ignored
    assert [e.history_id for e in history.recent(containing="100%")] == []
    assert [e.history_id for e in history.recent(lm="a", status="done")] == [done]
    with pytest.raises(ValueError, match="status must be one of"):
        history.record(QuestionTrace(question="q", scope=NO_SCOPE), status="lost")  # type: ignore[arg-type]


def test_a_question_ends_done_failed_or_stopped_at_its_time_bound() -> None:
    from pipeline.evaluation.history import final_status
    from pipeline.program.events import Completed, Failed

    def completed(trace: QuestionTrace | None) -> Completed:
        return Completed(answer="a", sections=(), lm_calls=0, tokens=0, seconds=0.0, trace=trace)

    assert final_status(completed(QuestionTrace(question="q", scope=NO_SCOPE))) == "done"
    assert final_status(completed(None)) == "done"
    assert final_status(Failed(message="language model failed")) == "failed"
    bound = Intervention(guard="deadline", target="retrieving", reason="past the time bound of 120 s while retrieving")
    stopped = QuestionTrace(question="q", scope=NO_SCOPE, fallbacks=[bound])
    assert final_status(completed(stopped)) == "stopped"


def test_a_file_written_before_statuses_gets_them_and_its_failures_are_told_apart(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.executescript(
        """CREATE TABLE history (
            history_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, question TEXT NOT NULL,
            scope TEXT NOT NULL, answer TEXT NOT NULL, lm_calls INTEGER NOT NULL, tokens INTEGER NOT NULL,
            seconds REAL NOT NULL, trace TEXT NOT NULL);"""
    )
    answered = QuestionTrace(question="answered?", scope=NO_SCOPE, answer="yes")
    failing = QuestionTrace(question="failed?", scope=NO_SCOPE)
    failing.fallbacks.append(Intervention(guard="lm", target="call", reason="score: ConnectionError"))
    for number, trace in enumerate((answered, failing)):
        old.execute(
            "INSERT INTO history VALUES (?, ?, ?, ?, ?, 0, 0, 0.0, ?)",
            (
                f"id-{number}",
                f"2026-01-0{number + 1}T00:00:00+00:00",
                trace.question,
                "{}",
                trace.answer,
                trace.model_dump_json(),
            ),
        )
    old.commit()
    old.close()
    history = History(path)
    assert [(e.question, e.status, e.lm) for e in history.recent()] == [
        ("failed?", "failed", None),
        ("answered?", "done", None),
    ]
    History(path).close()  # opening it again finds the columns in place
    new = history.record(QuestionTrace(question="new?", scope=NO_SCOPE), status="cancelled", lm="x")
    assert history.get(new).status == "cancelled"


# ---- a question is written when it starts and closed when it ends (issue 36, D7) -------------------------


def test_a_question_is_running_from_its_start_and_the_first_close_decides(tmp_path: Path) -> None:
    history = History(tmp_path / "h.sqlite")
    history_id = history.begin(QuestionTrace(question="What is the rent?", scope={}), lm="dummy")
    (entry,) = history.recent()
    assert (entry.history_id, entry.status, entry.lm) == (history_id, "running", "dummy")
    stopped = QuestionTrace(question="What is the rent?", scope={}, lm_calls=1)
    stopped.interventions.append(Intervention(guard="stop", target="question", reason="the server stopped"))
    assert history.finish(history_id, stopped, "cancelled")
    assert not history.finish(history_id, QuestionTrace(question="What is the rent?", scope={}, answer="late"), "done")
    entry = history.get(history_id)
    assert entry.status == "cancelled" and entry.lm_calls == 1 and entry.answer == ""
    assert entry.trace.interventions[0].reason == "the server stopped"


WRITER_THAT_DIES = """
import os, sys
from pathlib import Path
from pipeline.evaluation.history import History
from pipeline.program.trace import QuestionTrace
print(History(Path(sys.argv[1])).begin(QuestionTrace(question="Who is the tenant?", scope={})), flush=True)
os.kill(os.getpid(), 9)  # a server killed with its question under way
"""


def test_a_question_whose_writer_died_reads_as_interrupted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.sqlite"
    died = subprocess.run(
        [sys.executable, "-c", WRITER_THAT_DIES, str(path)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert died.returncode == -9
    entry = History(path).get(died.stdout.strip())
    assert entry.status == "interrupted" and entry.question == "Who is the tenant?"
    capsys.readouterr()
    assert main(["history", "--history", str(path), "--all", "--json"]) == 0
    assert [e["status"] for e in json.loads(capsys.readouterr().out)] == ["interrupted"]
