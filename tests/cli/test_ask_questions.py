"""`scoperag ask --questions FILE --out ANSWERS.jsonl`: every question answered with one load of the index and
the program, one answer line each (what `ask --json` prints, under the line's id), each one recorded in the
history; a rerun resumes (a line cut by a stop is written again); Ctrl-C stops with 130 saying how many were
written; a bad file stops before anything is loaded. The embedded model is never loaded: the shipped program
runs its floors (and a loader that fails the test stands in for it)."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli.main import main
from pipeline.evaluation.history import History
from tests.conftest import DEMO_DIR

QUESTIONS = [
    {"id": "rent", "question": "What is the monthly rent?", "property": "Banda Lane"},
    {"question": "Who is the tenant?", "entity": "Banda Lane"},
    {"id": "valuer", "question": "Which firm valued the property?", "document_ids": ["banda-lane/valuation.md"]},
]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("questions-index")
    assert main(["index", str(DEMO_DIR), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    return out


@pytest.fixture(autouse=True)
def no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No active profile (the shipped program answers), and loading the embedded model fails the test."""
    from pipeline.program.lm import factory

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the embedded model was loaded although no step calls it")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(factory, "load_local_model", refuse)
    yield


def _questions(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _run(index_dir: Path, tmp_path: Path, questions: Path, *extra: str) -> int:
    command = ["ask", "--questions", str(questions), "--out", str(tmp_path / "answers.jsonl")]
    return main([*command, "--index", str(index_dir), "--history", str(tmp_path / "h.sqlite"), *extra])


def _answers(tmp_path: Path) -> list[dict[str, Any]]:
    text = (tmp_path / "answers.jsonl").read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_every_question_is_answered_with_one_load_each_line_as_ask_json_prints_it(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pipeline.cli.ask_many as ask_many
    import pipeline.store as store_module

    loads = {"store": 0, "program": 0}
    open_store, load_program = store_module.open_store, ask_many.load_program

    def counted_store(*args: Any, **kwargs: Any) -> Any:
        loads["store"] += 1
        return open_store(*args, **kwargs)

    def counted_program(*args: Any, **kwargs: Any) -> Any:
        loads["program"] += 1
        return load_program(*args, **kwargs)

    monkeypatch.setattr(store_module, "open_store", counted_store)
    monkeypatch.setattr(ask_many, "load_program", counted_program)
    assert _run(index_dir, tmp_path, _questions(tmp_path / "q.jsonl", QUESTIONS)) == 0
    assert loads == {"store": 1, "program": 1}
    out = capsys.readouterr().out
    assert re.search(r"3 questions answered in \d+:\d\d \([\d.]+ s per question\)", out)
    answers = _answers(tmp_path)
    ids = [a["id"] for a in answers]
    assert ids[0] == "rent" and ids[2] == "valuer" and re.fullmatch(r"[0-9a-f]{16}", ids[1])
    assert [a["question"] for a in answers] == [q["question"] for q in QUESTIONS]
    assert all(a["phase"] == "completed" and a["sections"] and "value" in a for a in answers)
    # each answer is in the history, under the id its line names
    history = History(tmp_path / "h.sqlite")
    assert {history.get(a["history_id"]).question for a in answers} == {q["question"] for q in QUESTIONS}
    # the same question asked alone with --json prints the same answer
    alone_command = ["ask", QUESTIONS[0]["question"], "--property", "Banda Lane", "--json"]
    assert main([*alone_command, "--index", str(index_dir), "--history", str(tmp_path / "h.sqlite")]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert set(answers[0]) == {"id", "question", *alone}
    for key in ("answer", "sections", "value", "strategy", "lm_calls", "scope_note", "implicit_scope"):
        assert answers[0][key] == alone[key], key


def test_a_rerun_resumes_writes_a_cut_line_again_and_asks_new_questions(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = _questions(tmp_path / "q.jsonl", QUESTIONS)
    assert _run(index_dir, tmp_path, questions) == 0
    out = tmp_path / "answers.jsonl"
    whole = out.read_bytes()
    cut = whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 1 + 40]  # a kill while the third line was written
    out.write_bytes(cut)
    _questions(questions, [*QUESTIONS, {"id": "deposit", "question": "What is the deposit?", "property": "banda-lane"}])
    capsys.readouterr()
    assert _run(index_dir, tmp_path, questions) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"{out} line 3 was cut short by a stop: it is written again" in err
    assert f"resuming: 2 of 4 questions are answered in {out} already; asking the other 2" in err
    answers = _answers(tmp_path)
    assert [a["id"] for a in answers][:2] == [a["id"] for a in map(json.loads, whole.decode().splitlines())][:2]
    assert sorted(a["id"] for a in answers) == sorted(["rent", "valuer", "deposit", answers[1]["id"]])
    # nothing left to ask: says so, asks nothing
    assert _run(index_dir, tmp_path, questions) == 0
    assert "all 4 questions are answered" in " ".join(capsys.readouterr().err.split())
    assert len(_answers(tmp_path)) == 4


def test_ctrl_c_stops_with_130_keeps_whole_lines_and_says_how_many_were_written(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.program.module import ScopedQA

    stream = ScopedQA.stream
    started: list[str] = []

    def interrupted(self: ScopedQA, question: str, scope: Any) -> Iterator[Any]:
        started.append(question)
        if len(started) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the second question is answered
        yield from stream(self, question, scope)

    monkeypatch.setattr(ScopedQA, "stream", interrupted)
    many = [{"question": f"What is the monthly rent? ({n})", "property": "Banda Lane"} for n in range(6)]
    questions = _questions(tmp_path / "q.jsonl", many)
    assert _run(index_dir, tmp_path, questions) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert "stopping: no new question starts" in err
    found = re.search(r"stopped: (\d+) of 6 answers written to (\S+) in \d+:\d\d", err)
    assert found is not None and found.group(2) == str(tmp_path / "answers.jsonl")
    written = _answers(tmp_path)
    assert 1 <= len(written) == int(found.group(1)) <= 2 and len(started) <= 3
    assert "left: run the same command again to resume" in err
    monkeypatch.setattr(ScopedQA, "stream", stream)
    assert _run(index_dir, tmp_path, questions) == 0
    assert sorted(a["question"] for a in _answers(tmp_path)) == sorted(q["question"] for q in many)


def test_a_bad_question_file_stops_before_anything_is_loaded_or_written(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "fine"}\n{"question": ""}\nnot json\n', encoding="utf-8")
    assert _run(index_dir, tmp_path, questions) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "line 2: question:" in err and "line 3: not JSON" in err and "Nothing was asked" in err
    assert not (tmp_path / "answers.jsonl").exists()
    unknown = _questions(tmp_path / "scope.jsonl", [{"question": "a", "property": "Atlantis Lane"}])
    assert _run(index_dir, tmp_path, unknown) == 2
    assert "line 1:" in capsys.readouterr().err and not (tmp_path / "answers.jsonl").exists()


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["What is the rent?", "--questions", "q.jsonl", "--out", "a.jsonl"], "ask takes a question, or --questions"),
        (["--questions", "q.jsonl"], "ask takes a question, or --questions FILE with --out"),
        (["--out", "a.jsonl"], "ask takes a question, or --questions FILE with --out"),
        (["--questions", "q.jsonl", "--out", "q.jsonl"], "is the question file itself"),
        ([], "ask what?"),
    ],
)
def test_ask_takes_one_question_or_a_question_file_with_an_answer_file(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], said: str
) -> None:
    _questions(tmp_path / "q.jsonl", QUESTIONS)
    assert main(["ask", *arguments, "--index", str(index_dir)]) == 2
    assert said in capsys.readouterr().err


def test_questions_answered_two_at_a_time_are_each_written_once(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    many = [{"question": f"What is the deposit? ({n})", "property": "Banda Lane"} for n in range(5)]
    assert _run(index_dir, tmp_path, _questions(tmp_path / "q.jsonl", many), "--parallel", "2", "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["questions"], summary["answered"], summary["failed"], summary["stopped"]) == (5, 5, 0, False)
    assert summary["seconds_per_question"] > 0
    assert sorted(a["question"] for a in _answers(tmp_path)) == sorted(q["question"] for q in many)


# -- the probe's findings E1, E6, E7, E8 and E10 (issue 47) ---------------------------------------------------


def _demo_questions(tmp_path: Path) -> Path:
    return _questions(tmp_path / "q.jsonl", QUESTIONS)


def test_an_unrelated_file_of_one_line_without_a_line_end_is_left_as_it_is(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # E1: what json.dump and `echo -n` write was cut as "a line a stop cut short" and overwritten, exit 0
    config = tmp_path / "answers.jsonl"
    config.write_bytes(b'{"api_key": "keep-me"}')
    assert _run(index_dir, tmp_path, _demo_questions(tmp_path)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "line 1 is not an answer `scoperag ask --questions` wrote, nor one a stop cut short" in err
    assert "give another --out" in err
    assert config.read_bytes() == b'{"api_key": "keep-me"}'
    # a first answer line cut short with no whole answer before it is not known to be ours either
    config.write_bytes(b'{"id": "rent", "question": "What is the mon')
    assert _run(index_dir, tmp_path, _demo_questions(tmp_path)) == 2
    assert config.read_bytes() == b'{"id": "rent", "question": "What is the mon'


def test_a_symlink_a_device_and_a_directory_are_refused_as_out_by_name(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # E1 (through a symlink) and E7 (--out /dev/null ended in a traceback from fsync)
    config = tmp_path / "config.json"
    config.write_bytes(b'{"api_key": "keep-me"}\n')
    (tmp_path / "answers.jsonl").symlink_to(config)
    assert _run(index_dir, tmp_path, _demo_questions(tmp_path)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"--out {tmp_path / 'answers.jsonl'} is a symbolic link (to {config})" in err and "Traceback" not in err
    assert config.read_bytes() == b'{"api_key": "keep-me"}\n'
    for out in ("/dev/null", str(tmp_path)):
        command = ["ask", "--questions", str(tmp_path / "q.jsonl"), "--out", out, "--index", str(index_dir)]
        assert main([*command, "--history", str(tmp_path / "h.sqlite")]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert f"--out {out} is not a regular file" in err and "name a file for the answers" in err


def test_a_device_or_an_oversized_question_file_is_refused_by_name_before_it_is_read(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # E6: /dev/zero was read whole (5.4 GB) before any check
    from pipeline.program import question_file

    command = ["ask", "--questions", "/dev/zero", "--out", str(tmp_path / "a.jsonl"), "--index", str(index_dir)]
    assert main(command) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "/dev/zero: not a regular file" in err and "Nothing was asked" in err
    monkeypatch.setattr(question_file, "MAX_QUESTION_FILE_BYTES", 100)
    big = _questions(tmp_path / "big.jsonl", QUESTIONS)
    assert _run(index_dir, tmp_path, big) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{big}: {big.stat().st_size} bytes, over the 100-byte limit" in err
    assert not (tmp_path / "answers.jsonl").exists()


def test_a_csv_cell_over_the_csv_field_limit_is_named_by_its_line(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # E7: a cell over 131,072 characters ended in a traceback
    questions = tmp_path / "q.csv"
    questions.write_text("question\nWhat is the rent?\n" + "x" * 131_073 + "\n", encoding="utf-8")
    assert _run(index_dir, tmp_path, questions) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "line 3: not CSV the file can be read past (a cell longer than 131,072 characters" in err
    assert "Traceback" not in err and not (tmp_path / "answers.jsonl").exists()


def test_a_second_run_on_the_same_answer_file_is_refused_by_name(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # E8: two batches on one file wrote every answer twice
    import fcntl

    out = tmp_path / "answers.jsonl"
    out.touch()
    with out.open("rb") as first:  # the first run holds the file's lock while it writes
        fcntl.flock(first.fileno(), fcntl.LOCK_EX)
        assert _run(index_dir, tmp_path, _demo_questions(tmp_path)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"another `scoperag ask --questions` is writing to {out}" in err and "give another --out" in err
    assert out.read_bytes() == b""
    assert _run(index_dir, tmp_path, _demo_questions(tmp_path)) == 0
    assert len(_answers(tmp_path)) == 3


def test_a_resume_trusts_no_forged_line(index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # E8: a line shaped like {"id": ..., "phase": "completed"} made the run skip that question
    out = tmp_path / "answers.jsonl"
    forged = json.dumps({"id": "rent", "question": "What is the monthly rent?", "phase": "completed"}) + "\n"
    out.write_text(forged, encoding="utf-8")
    assert _run(index_dir, tmp_path, _demo_questions(tmp_path)) == 2
    assert "line 1 is not an answer `scoperag ask --questions` wrote" in " ".join(capsys.readouterr().err.split())
    assert out.read_text(encoding="utf-8") == forged
    # a whole answer to another question under the same id is not this file's answer either
    assert _run(index_dir, tmp_path / "other", _questions(tmp_path / "one.jsonl", QUESTIONS[:1])) == 0
    other = json.loads((tmp_path / "other" / "answers.jsonl").read_text(encoding="utf-8"))
    out.write_text(json.dumps({**other, "question": "What is the deposit?"}) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert _run(index_dir, tmp_path, _demo_questions(tmp_path)) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{out} holds another question under id 'rent' than line 1 asks" in err


def test_a_question_stopped_at_its_time_bound_is_recorded_as_stopped(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # E10: it was recorded as done
    settings = tmp_path / "bound.toml"
    settings.write_text("[question]\nseconds = 0.000001\n", encoding="utf-8")
    assert _run(index_dir, tmp_path, _demo_questions(tmp_path), "--settings", str(settings)) == 0
    history = History(tmp_path / "h.sqlite")
    statuses = {history.get(a["history_id"]).status for a in _answers(tmp_path)}
    history.close()
    assert statuses == {"stopped"}
