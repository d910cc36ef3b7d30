"""benchmarks/scoreboard.py: its pure parts (rows read with the derived `invented` column, the challenge's
submission form of a typed value, the organisers' grading per question, pairing by id) and `--help`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.scripts import load_benchmark

scoreboard = load_benchmark("scoreboard")


def write_table(path: Path, rows: list[dict[str, object]]) -> Path:
    columns = ["id", "case", "answer_line_correct", "abstained_when_absent", "typed_value", "seconds"]
    lines = [",".join(columns)]
    for row in rows:
        lines.append(",".join("" if row.get(c) is None else str(row[c]) for c in columns))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rows_read_numbers_and_derive_invented_answers_on_absent_cases(tmp_path: Path) -> None:
    table = write_table(
        tmp_path / "t.csv",
        [
            {"id": "a", "case": "chip", "answer_line_correct": 1.0},
            {"id": "b", "case": "chip", "abstained_when_absent": 0.0},
            {"id": "c", "case": "chip", "abstained_when_absent": 1.0},
        ],
    )
    rows = scoreboard.read_rows(table)
    assert [r["invented"] for r in rows] == [None, 1.0, 0.0]
    assert rows[0]["answer_line_correct"] == 1.0 and rows[0]["abstained_when_absent"] is None


def test_a_typed_value_is_submitted_as_the_challenge_writes_answers() -> None:
    assert scoreboard.submitted(json.dumps({"kind": "number", "value": 88100000})) == 88100000.0
    assert scoreboard.submitted(json.dumps({"kind": "number", "absent": True})) == "N/A"
    assert scoreboard.submitted(json.dumps({"kind": "name", "value": "TransUnion"})) == "TransUnion"
    assert scoreboard.submitted(None) is None


def test_pairing_is_by_example_id_and_says_nothing_where_no_example_has_the_metric() -> None:
    base = [{"id": "a", "case": "chip", "m": 0.0}, {"id": "b", "case": "chip", "m": 1.0}]
    head = [{"id": "b", "case": "chip", "m": 1.0}, {"id": "a", "case": "chip", "m": 1.0}]
    difference = scoreboard.paired(base, head, "m")
    assert difference is not None and difference.n == 2 and difference.difference == 0.5
    assert scoreboard.paired(base, head, "other") is None


def test_the_organisers_grade_weighs_questions_whose_answer_exists_twice(tmp_path: Path) -> None:
    data = ROOT.parent / "shared" / "data"
    traces = ROOT / "datasets" / "erc-round1" / "traces" / "dev.jsonl"
    examples = [json.loads(line) for line in traces.read_text().splitlines()]
    petra = next(e for e in examples if 'net income of "Petra' in e["question"])
    holley = next(e for e in examples if "EPS" in e["question"])
    rows = [
        {"id": petra["id"], "typed_value": json.dumps({"kind": "number", "value": 88100000})},
        {"id": holley["id"], "typed_value": json.dumps({"kind": "number", "value": 1.5})},
    ]
    graded = scoreboard.rank_scores(rows, traces, data)
    # Petra's figure right (weight 2), Holley's EPS wrong where the reports do not state it (weight 1)
    assert graded[0]["rank_score"] == 2 / 1.5 and graded[1]["rank_score"] == 0.0


def test_help_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scoreboard.py"), "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--base" in done.stdout
