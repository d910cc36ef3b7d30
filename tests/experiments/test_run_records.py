"""What a researcher reads of a job: the runs table, the export of a rejected run, the cost estimate and
the MLflow record (names, headline metrics, prompt versions)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from experiments.runner import ProgressEvent, RunSummary, run_name
from experiments.runs import compact_lines, export_run, list_runs
from experiments.store import open_tracker
from experiments.tracking import prompt_name, register_prompts
from pipeline.errors import TrackingError
from pipeline.evaluation.examples import CASES
from pipeline.export import load_export, program_state
from pipeline.export.prompts import outline
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.experiments import fresh_mlruns, run, write_config, write_data


@pytest.fixture(scope="module")
def rejected(
    tmp_path_factory: pytest.TempPathFactory,
    mlflow_template: Path,
    store: Store,
) -> tuple[RunSummary, Path, list[ProgressEvent]]:
    """A job whose candidate is not selected (the scripted LM answers alike with and without demos)."""
    where = tmp_path_factory.mktemp("rejected")
    mlruns = fresh_mlruns(mlflow_template, where / "mlruns")
    config = write_config(where, write_data(where / "traces"), require_improvement="true")
    events: list[ProgressEvent] = []
    return run(config, mlruns, store, progress=events.append), mlruns, events


# -- finding 2: the runs table ----------------------------------------------------------------------


def test_the_runs_table_fits_80_columns_with_counts_interval_and_what_each_export_runs(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
    rejected: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    for summary, mlruns, _ in (finished, rejected):
        table = list_runs(mlruns)
        row = table[table["run_id"] == summary.run_id].iloc[0]
        counts = {case: int(summary.result.loc[case, "n"]) for case in CASES}
        assert {case: row[f"n {case}"] for case in CASES} == counts
        total = summary.comparison[summary.comparison["case"] == "all"].iloc[0]
        assert row["difference"] == pytest.approx(total["difference"], abs=1e-4)
        assert row["ci_low"] == pytest.approx(total["ci_low"], abs=1e-4)
        assert row["before"] == pytest.approx(float(summary.baseline.loc["all", "composite"]))
        assert row["after"] == pytest.approx(float(summary.result.loc["all", "composite"]))
        lines = compact_lines(table)
        assert all(len(line) <= 80 for line in lines)
        at = next(i for i, line in enumerate(lines) if line.startswith(summary.run_id[:8]))
        line, verdict = lines[at], lines[at + 1]
        assert "/".join(str(counts[c]) for c in CASES) in line
        assert f"{row['before']:.2f}" in line and f"{row['ci_low']:+.2f}" in line
        assert row["started"][5:] in line  # the start time whole
        # the model each run compiled for, from its logged lm.task, beside the verdict
        assert row["model"] == "openai/scripted-test"
        if summary.selected:
            assert (
                verdict.strip() == f"{row['config']} for openai/scripted-test: selected" and row["runs"] == "compiled"
            )
        else:
            assert row["verdict"] == "rejected" and row["reason"] == summary.rejection and row["runs"] == "uncompiled"
            assert verdict.strip() == f"{row['config']} for openai/scripted-test: rejected (no improvement)"


def test_a_stage_run_whose_export_runs_the_floor_is_not_called_selected() -> None:
    """What `runs` says of a stage job is what its exported program runs: a compiled candidate that beat the
    uncompiled LM but lost to the floor is "runs floor span", never "selected"."""
    from types import SimpleNamespace

    from experiments.runs import _verdict_fields

    def run(tags: dict[str, str]) -> object:
        return SimpleNamespace(data=SimpleNamespace(tags=tags, metrics={}), info=SimpleNamespace(status="FINISHED"))

    floor = _verdict_fields(run({"scoperag.stage": "answer", "scoperag.step": "span", "scoperag.selected": "true"}))
    assert (floor["runs"], floor["verdict"]) == ("floor span", "runs floor span")
    assert floor["reason"] == "the compiled LM did not beat it"
    lm = _verdict_fields(run({"scoperag.stage": "answer", "scoperag.step": "lm", "scoperag.selected": "true"}))
    assert (lm["runs"], lm["verdict"]) == ("compiled", "selected")
    kept = _verdict_fields(run({"scoperag.stage": "answer", "scoperag.step": "lm", "scoperag.selected": "false"}))
    assert (kept["runs"], kept["verdict"]) == ("uncompiled", "rejected")


def test_config_names_are_shown_whole_and_a_sweep_row_shows_the_metric_a_job_selects_by(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    from experiments.cli import sweep_row

    summary, mlruns, _ = finished
    table = list_runs(mlruns)
    table.loc[:, "config"] = "stage-decompose-demo-sec-long-name-of-a-config-that-goes-on"  # once cut at 16
    lines = compact_lines(table)
    assert all(len(line) <= 80 for line in lines)
    assert lines[2].startswith("  stage-decompose-demo-sec-long-name-of-a-config-that-goes-on for")
    row = sweep_row(summary)
    total = summary.comparison[summary.comparison["case"] == "all"].iloc[0]
    assert row["metric"] == "composite" and row["before"] == total["baseline"] and row["after"] == total["candidate"]
    assert row["difference [95% CI]"] == f"{total['difference']:+.3f} [{total['ci_low']:+.3f}, {total['ci_high']:+.3f}]"
    assert sweep_row(None) == dict.fromkeys(("selected", "metric", "before", "after", "difference [95% CI]"))


def test_runs_prints_the_compact_table_and_wide_and_json_carry_the_rest(
    rejected: tuple[RunSummary, Path, list[ProgressEvent]], capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from pipeline.cli.main import main

    summary, mlruns, _ = rejected
    capsys.readouterr()
    assert main(["runs", "--mlruns", str(mlruns)]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()) and summary.run_id[:8] in out and "rejected" in out
    assert main(["runs", "--mlruns", str(mlruns), "--wide"]) == 0
    wide = capsys.readouterr().out
    assert "wrong_property_citations" in wide and "prompts" in wide
    assert main(["runs", "--mlruns", str(mlruns), "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["verdict"] == "rejected" and record["reason"] == summary.rejection and record["n chip"] == 1
    assert record["stage"] == "end_to_end" and record["runs"] == "uncompiled"
    assert record["model"] == "openai/scripted-test" and "model" in wide


@pytest.mark.parametrize(
    ("task", "model"),
    [
        ("embedded", "embedded:0.5b"),
        ("embedded:0.5b", "embedded:0.5b"),
        ("embedded:1.5b", "embedded:1.5b"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("an LM this version does not read", "an LM this version does not read"),
        (None, ""),
    ],
)
def test_the_model_a_run_compiled_for_is_named_from_its_logged_task(task: str | None, model: str) -> None:
    import pandas as pd

    from experiments.runs import compiled_for

    assert compiled_for(task) == model
    row = {"run_id": "0123456789", "started": "2026-11-28 14:00", "config": "stage_answer_demo", "model": model}
    row.update({"verdict": "runs floor span", "reason": "the LM did not beat it", "champion": False})
    lines = compact_lines(pd.DataFrame([row]))
    said = f"stage_answer_demo for {model}: runs floor span" if model else "stage_answer_demo: runs floor span"
    notes = next(i for i, line in enumerate(lines) if line.startswith("val n/case"))
    assert " ".join(" ".join(lines[2:notes]).split()) == f"{said} (the LM did not beat it)"


# -- finding 3: exporting a rejected run ------------------------------------------------------------


def test_a_rejected_run_exports_only_when_the_baseline_is_asked_for(
    rejected: tuple[RunSummary, Path, list[ProgressEvent]],
    store: Store,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pipeline.cli.main import main

    summary, mlruns, _ = rejected
    assert not summary.selected
    with pytest.raises(TrackingError, match=r"rejected .*--baseline"):
        export_run(summary.run_id, tmp_path / "out", mlruns)
    assert not (tmp_path / "out").exists()
    capsys.readouterr()
    command = ["export", summary.run_id, "--out", str(tmp_path / "out"), "--mlruns", str(mlruns)]
    assert main(command) == 2
    assert "--baseline" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main([*command, "--baseline"]) == 0
    said = capsys.readouterr().err
    assert "the uncompiled baseline (the candidate was rejected); demos: none" in " ".join(said.split())
    loaded, _ = load_export(tmp_path / "out", ScopedQA(store))
    assert program_state(loaded) == program_state(ScopedQA(store))


def test_exporting_a_selected_run_says_it_wrote_the_compiled_candidate(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pipeline.cli.main import main

    summary, mlruns, _ = finished
    capsys.readouterr()
    assert main(["export", summary.run_id, "--out", str(tmp_path / "out"), "--mlruns", str(mlruns)]) == 0
    assert "the compiled candidate; demos: score 1, answer 1" in " ".join(capsys.readouterr().err.split())


# -- finding 2 and 4: too few validation examples, and the cost before the job ---------------------------


def test_a_job_below_the_minimum_validation_size_warns_first_with_its_estimate(
    rejected: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    _, _, events = rejected
    warnings = [e for e in events if e.warning]
    assert len(warnings) == 1 and "only 4 validation examples" in warnings[0].message
    assert "data.min_val_size = 20" in warnings[0].message
    first_lm_phase = next(i for i, e in enumerate(events) if e.phase == "baseline")
    estimate = next(i for i, e in enumerate(events) if e.message.startswith("estimate: up to "))
    assert estimate < events.index(warnings[0]) < first_lm_phase
    # 4 validation examples x 4 calls, before and after, plus BootstrapFewShot's 4 training questions of 4 calls
    # (under the budget of 200); a remote LM's speed is unknown until measured here.
    said = "estimate: up to 48 LM calls (the time depends on the LM: none measured here yet)"
    assert events[estimate].message == said


def test_a_job_with_enough_validation_examples_does_not_warn(
    tmp_path: Path,
    mlflow_template: Path,
    store: Store,
) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces"), data="min_val_size = 4")
    events: list[ProgressEvent] = []
    run(config, mlruns, store, progress=events.append)
    assert not [e for e in events if e.warning]


# -- finding 6: the MLflow record ----------------------------------------------------------------------


def test_runs_are_named_by_config_hash_and_time_and_log_headline_metrics(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    summary, mlruns, _ = finished
    logged = open_tracker(mlruns).client.get_run(summary.run_id)
    name = logged.info.run_name
    assert name.startswith(f"tiny-{summary.config_hash[:8]}-") and len(name) == len("tiny-12345678-20260101-000000")
    assert run_name("a", "f" * 64, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "a-ffffffff-20260102-030405"
    metrics = logged.data.metrics
    total = summary.comparison[summary.comparison["case"] == "all"].iloc[0]
    assert metrics["val.before"] == pytest.approx(total["baseline"], abs=1e-4)
    assert metrics["val.after"] == pytest.approx(total["candidate"], abs=1e-4)
    assert metrics["val.ci_low"] == pytest.approx(total["ci_low"], abs=1e-4) and metrics["val.n"] == 4


def test_a_rejected_candidates_prompts_are_titled_and_tagged_as_candidates(
    rejected: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    summary, mlruns, _ = rejected
    client = open_tracker(mlruns).client
    answer = client.get_prompt_version(prompt_name("answer"), summary.prompt_versions["answer"])
    assert "(candidate, rejected)" in answer.template and "(optimised)" not in answer.template
    assert answer.tags["role"] == "rejected candidate" and answer.tags["selected"] == "false"
    assert "rejected candidate" in answer.commit_message


def test_an_identical_prompt_is_not_registered_again(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    summary, mlruns, _ = finished
    tracker = open_tracker(mlruns)
    client = tracker.client
    before = {m: len(list(client.search_prompt_versions(prompt_name(m)))) for m in summary.prompt_versions}
    template = client.get_prompt_version(prompt_name("answer"), summary.prompt_versions["answer"]).template
    other = tracker.client.create_run(tracker.client.get_run(summary.run_id).info.experiment_id).info.run_id
    versions = register_prompts(tracker, other, {"answer": template, "score": "a prompt never seen"}, {})
    assert versions["answer"] == summary.prompt_versions["answer"]
    assert versions["score"] == before["score"] + 1
    assert len(list(client.search_prompt_versions(prompt_name("answer")))) == before["answer"]
    assert client.get_run(other).data.tags["scoperag.prompt.answer"] == str(versions["answer"])


def test_demos_in_the_prompt_registry_read_as_outlines_not_json(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    summary, mlruns, _ = finished
    client = open_tracker(mlruns).client
    answer = client.get_prompt_version(prompt_name("answer"), summary.prompt_versions["answer"]).template
    demo = answer.split("## Demo 1", 1)[1]
    assert "```yaml" in demo and "  sub_question_index: 0" in demo and "    - sentence_id: " in demo
    assert '"sentences"' not in demo and "      text: " in demo
    text = "line one\nline two"
    assert outline([{"filename": "a.md", "page": 3, "text": text}]) == (
        "- filename: a.md\n  page: 3\n  text: |\n    line one\n    line two"
    )


def test_outline_keeps_every_value() -> None:
    value: dict[str, Any] = {"a": [1, 2.5, None, True], "b": {"c": ""}, "d": [], "e": "-dash", "f": "x" * 90}
    text = outline(value)
    assert "  - 1\n  - 2.5\n  - null\n  - true" in text and 'c: ""' in text and "d: []" in text
    assert 'e: "-dash"' in text and "f: |\n  " + "x" * 90 in text


def test_every_lm_call_of_an_evaluation_is_a_progress_heartbeat(
    rejected: tuple[RunSummary, Path, list[ProgressEvent]],
) -> None:
    _, _, events = rejected
    baseline = [e for e in events if e.phase == "baseline"]
    # 4 examples x 3 calls: a report per call (with the examples done so far) and one per finished example.
    # Each carries the whole job's ETA beside its message (shown once on the screen), never in it.
    per_call = [e for e in baseline if e.message.endswith(" LM calls") and e.total == 4]
    assert {int(e.message.split(", ")[1].split()[0]) for e in per_call} == set(range(1, 13))
    assert baseline[-1].done == 4 and baseline[-1].message == "examples, 12 LM calls"
    assert all(e.eta.startswith("job ETA ") for e in per_call[1:])


def test_a_prompt_created_meanwhile_by_another_job_gets_the_new_version(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two jobs of a sweep creating the same new prompt at once: the loser adds its version to the winner's."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_ALREADY_EXISTS

    summary, mlruns, _ = finished
    tracker = open_tracker(mlruns)
    real = tracker.client.register_prompt
    raced: list[str] = []

    def racing(**kwargs: Any) -> Any:
        if not raced:
            real(**kwargs)  # the other job wins the race ...
            raced.append(kwargs["name"])
            raise MlflowException(f"Prompt (name={kwargs['name']}) already exists.", RESOURCE_ALREADY_EXISTS)
        return real(**kwargs)

    monkeypatch.setattr(tracker.client, "register_prompt", racing)
    other = tracker.client.create_run(tracker.client.get_run(summary.run_id).info.experiment_id).info.run_id
    versions = register_prompts(tracker, other, {"raced": "a prompt two jobs create at once"}, {})
    assert raced == ["scoperag-raced"] and versions == {"raced": 1}  # the winner's identical version
    versions = register_prompts(tracker, other, {"raced": "then another prompt"}, {})
    assert versions == {"raced": 2}
