"""The typed value on every command-line surface: `ask` prints it under the answer line, `ask --json` and each
`ask --questions` line carry it, `history ID` shows it and `history --json` lists it, and `evaluate` writes it in
its per-example CSV (`typed_value`). The program's answers carry values here as the answer step gives them
(tests.support.typed_values); citations name documents by title."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli.main import main
from tests.conftest import DEMO_DIR
from tests.support.typed_values import ABSENT_NOTE, valued

RENT = "What is the monthly rent?"
# The demo lease's title, as its citations name it.
LEASE = "Lease Agreement - 14 Banda Lane"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("typed-index")
    assert main(["index", str(DEMO_DIR), "--out", str(out), "--embedder", "hash", "--json"]) == 0
    return out


@pytest.fixture(autouse=True)
def valued_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every command's program gives typed values; no active profile; the embedded model is never loaded."""
    import pipeline.cli.ask as ask
    import pipeline.cli.ask_many as ask_many
    import pipeline.cli.evaluate as evaluate
    from pipeline.program.lm import factory

    for module in (ask, ask_many, evaluate):
        load = module.load_program
        monkeypatch.setattr(module, "load_program", lambda *a, _load=load, **k: valued(_load(*a, **k)))

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the embedded model was loaded although no step calls it")

    monkeypatch.setattr(factory, "load_local_model", refuse)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCOPERAG_CACHE_DIR", str(tmp_path / "cache"))
    yield


def _ask(index_dir: Path, tmp_path: Path, *extra: str) -> int:
    command = ["ask", RENT, "--property", "Banda Lane", "--index", str(index_dir)]
    return main([*command, "--history", str(tmp_path / "h.sqlite"), *extra])


def test_ask_prints_the_value_under_the_answer_line_and_cites_documents_by_title(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ask(index_dir, tmp_path) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    answer = next(i for i, line in enumerate(lines) if line.startswith("KSH 285,000"))
    assert lines[answer] == f"KSH 285,000 per month [{LEASE}, page 2]"
    assert lines[answer + 1] == "value: 285,000 KES (number; period 2023-03-01; page 2)"
    assert not any("lease.pdf" in line for line in lines)  # the file name stays in --json and the viewer


def test_ask_json_carries_the_typed_values_and_the_file_names(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ask(index_dir, tmp_path, "--json") == 0
    done = json.loads(capsys.readouterr().out)
    [section] = done["sections"]
    assert section["value"]["value"] == 285000 and section["value"]["currency"] == "KES"
    assert done["value"] == section["value"]
    [page] = section["value"]["pages"]
    assert (page["filename"], page["title"], page["page"]) == ("lease.pdf", LEASE, 2)
    assert f"[{LEASE}, page 2]" in done["answer"]


def test_history_shows_and_lists_the_value(index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _ask(index_dir, tmp_path, "--json") == 0
    history_id = json.loads(capsys.readouterr().out)["history_id"]
    assert main(["history", history_id[:8], "--history", str(tmp_path / "h.sqlite")]) == 0
    shown = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert "value: 285,000 KES (number; period 2023-03-01; page 2)" in shown
    assert f"sources: {LEASE} p.2; Valuation Report - 14 Banda Lane p.2" in " ".join(shown)
    # the questions asked of that index (history lists the index in use)
    assert main(["history", "--json", "--history", str(tmp_path / "h.sqlite"), "--index", str(index_dir)]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["id"] == history_id and entry["value"]["value"] == 285000
    assert main(["history", history_id, "--json", "--history", str(tmp_path / "h.sqlite")]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["value"] == entry["value"] and trace["sections"][0]["value"] == entry["value"]


def test_an_absent_value_is_shown_with_why(index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = ["ask", "How deep is the swimming pool?", "--property", "Banda Lane"]
    assert main([*command, "--index", str(index_dir), "--history", str(tmp_path / "h.sqlite")]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    said = next(i for i, line in enumerate(lines) if line.startswith("The documents in scope do not state"))
    assert lines[said + 1] == f"value: N/A (absent: {ABSENT_NOTE})"


def test_each_answer_line_of_a_question_file_carries_its_values(
    index_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = tmp_path / "q.csv"
    questions.write_text(f"id,question,property\nrent,{RENT},Banda Lane\n", encoding="utf-8")
    out = tmp_path / "answers.jsonl"
    command = ["ask", "--questions", str(questions), "--out", str(out), "--index", str(index_dir)]
    assert main([*command, "--history", str(tmp_path / "h.sqlite")]) == 0
    [line] = [json.loads(text) for text in out.read_text(encoding="utf-8").splitlines()]
    assert line["id"] == "rent" and line["value"]["value"] == 285000
    assert line["sections"][0]["value"]["pages"][0]["title"] == LEASE


def test_evaluate_writes_each_examples_value_in_its_csv(
    index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pipeline.evaluation.examples import make_example, write_examples
    from pipeline.program import lm

    monkeypatch.setattr(lm, "make_lm", lambda *args, **kwargs: None)  # the floors call no LM
    example = make_example(
        corpus="demo",
        case="property",
        question=RENT,
        scope={"property": "banda-lane"},
        gold_documents=("banda-lane/lease.pdf",),
        answer_facts=("KSH 285,000",),
    )
    traces = tmp_path / "traces.jsonl"
    write_examples(traces, [example])
    out = tmp_path / "eval"
    command = ["evaluate", "--traces", str(traces), "--index", str(index_dir), "--out", str(out), "--threads", "1"]
    assert main(command) == 0
    with (out / "examples-hybrid.csv").open(encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    value = json.loads(row["typed_value"])
    assert (row["id"], value["kind"], value["value"], value["currency"]) == (example.id, "number", 285000, "KES")
    assert re.fullmatch(r"\d+\.\d+", row["composite"])
