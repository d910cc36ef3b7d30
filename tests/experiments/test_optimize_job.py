"""The optimisation job runner and its MLflow record (temporary sqlite stores, DummyLM): compile, evaluate, log,
list, export and champion, gates, budget, LM cache, stale runs, bad data."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.clients.cache import Cache

from experiments.runner import ProgressEvent, RunSummary, run_experiment
from experiments.runs import champion, compare_runs, export_run, list_runs
from experiments.store import open_tracker
from experiments.tracking import (
    TAG_HOST,
    TAG_PID,
    TAG_PID_START,
    TAG_SELECTED,
    TAG_STOP,
    Tracker,
    experiment_id,
    prompt_name,
    reap_stale_runs,
    set_tags,
    start_run,
)
from pipeline.errors import BudgetExceededError, ExperimentConfigError, ExportError, TrackingError
from pipeline.evaluation.examples import CASES, write_examples
from pipeline.export import load_export, program_state
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.optimizers.test_optimizers import demo_examples
from tests.support.experiments import fresh_mlruns, run, write_config, write_data
from tests.support.fakes import cooperative, scripted_lm


def test_optimize_compiles_evaluates_and_logs_a_run(
    finished: tuple[RunSummary, Path, list[ProgressEvent]], store: Store
) -> None:
    summary, mlruns, events = finished
    assert summary.selected and summary.rejection is None
    assert list(summary.baseline.index) == [*sorted(CASES), "all"] and summary.result.loc["all", "n"] == 4
    assert summary.lm_calls == summary.new_lm_calls > 0 and summary.tokens > 0  # DummyLM never caches
    assert {e.phase for e in events} >= {"setup", "baseline", "compile", "result", "log", "done"}

    client = open_tracker(mlruns).client
    logged = client.get_run(summary.run_id)
    assert logged.info.status == "FINISHED"
    params, metrics, tags = logged.data.params, logged.data.metrics, logged.data.tags
    assert params["optimizer"] == "bootstrap_few_shot" and params["lm.task"] == "openai/scripted-test"
    assert json.loads(params["modules"]) == ["answer", "score"] and params["config_hash"] == summary.config_hash
    assert params["data_hash"].startswith("sha256:") and params["optimizer_params.max_bootstrapped_demos"] == "1"
    for case in (*CASES, "all"):
        assert f"baseline.{case}.composite" in metrics and f"result.{case}.composite" in metrics
    assert metrics["result.all.wrong_property_citations"] == 0 and metrics["selected"] == 1.0
    assert metrics["lm_calls.total"] == summary.lm_calls and metrics["lm_calls.compile"] == 3
    assert metrics["lm_calls.baseline"] == metrics["lm_calls.result"] == 12 and metrics["tokens.total"] > 0
    assert tags[TAG_SELECTED] == "true"

    artifacts = {f.path for f in client.list_artifacts(summary.run_id)}
    assert {"export", "evaluation", "prompts.md", "config.toml", "data"} <= artifacts
    assert {f.path for f in client.list_artifacts(summary.run_id, "evaluation")} >= {
        "evaluation/baseline-cases.csv",
        "evaluation/result-examples.csv",
        "evaluation/comparison.csv",
    }

    assert set(summary.prompt_versions) == {"decompose", "score", "answer", "hyde", "compute", "judge"}
    answer = client.get_prompt_version(prompt_name("answer"), summary.prompt_versions["answer"])
    assert answer.tags["run_id"] == summary.run_id and answer.tags["selected"] == "true"
    assert "(optimised)" in answer.template and "## Demos (1)" in answer.template
    assert (
        "(frozen)" in client.get_prompt_version(prompt_name("decompose"), summary.prompt_versions["decompose"]).template
    )

    loaded, manifest = load_export(summary.export_dir, ScopedQA(store))
    assert manifest.run_id == summary.run_id and manifest.trainset_hash == params["data_hash"]
    assert manifest.config.experiment["optimizer"] == "bootstrap_few_shot"
    assert manifest.scores["all"]["result.composite"] == pytest.approx(metrics["result.all.composite"])
    assert len(loaded.answer.demos) == 1 and loaded.decompose.demos == []


def test_list_runs_export_run_and_champion(
    finished: tuple[RunSummary, Path, list[ProgressEvent]], store: Store, tmp_path: Path
) -> None:
    summary, mlruns, _ = finished
    table = list_runs(mlruns)
    row = table[table["run_id"] == summary.run_id].iloc[0]
    assert row["status"] == "FINISHED" and row["selected"] == "true" and row["optimizer"] == "bootstrap_few_shot"
    assert row["all after"] == pytest.approx(float(summary.result.loc["all", "composite"]))
    assert row["prompts"] == " ".join(
        f"{m}:v{summary.prompt_versions[m]}" for m in ("decompose", "score", "answer", "hyde", "compute", "judge")
    )
    assert len(list_runs(mlruns, experiment="tests")) == len(table)
    with pytest.raises(TrackingError, match="known: Default, tests"):
        list_runs(mlruns, experiment="nope")

    out = tmp_path / "exported"
    manifest = export_run(summary.run_id, out, mlruns)
    assert manifest.run_id == summary.run_id
    loaded, _ = load_export(out, ScopedQA(store))
    assert program_state(loaded) == program_state(load_export(summary.export_dir, ScopedQA(store))[0])
    with pytest.raises(ExportError, match="not empty"):
        export_run(summary.run_id, out, mlruns)
    with pytest.raises(TrackingError, match="no run"):
        export_run("0" * 32, tmp_path / "other", mlruns)
    assert not (tmp_path / "other").exists()

    assert champion(summary.run_id, mlruns) == summary.prompt_versions
    table = list_runs(mlruns)
    assert bool(table[table["run_id"] == summary.run_id].iloc[0]["champion"])
    client = open_tracker(mlruns).client
    assert (
        int(client.get_prompt_version_by_alias(prompt_name("answer"), "champion").version)
        == (summary.prompt_versions["answer"])
    )


def test_runs_and_export_through_the_cli(
    finished: tuple[RunSummary, Path, list[ProgressEvent]],
    store: Store,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pipeline.cli.main import main

    summary, mlruns, _ = finished
    capsys.readouterr()
    assert main(["runs", "--mlruns", str(mlruns), "--json"]) == 0
    assert summary.run_id in {row["run_id"] for row in json.loads(capsys.readouterr().out)}
    out = tmp_path / "exported"
    export = ["export", summary.run_id, "--out", str(out), "--mlruns", str(mlruns)]
    assert main(export) == 0
    assert program_state(load_export(out, ScopedQA(store))[0]) == program_state(
        load_export(summary.export_dir, ScopedQA(store))[0]
    )
    assert main(export) == 2  # not empty: replacing it needs --overwrite
    assert "--overwrite" in capsys.readouterr().err
    assert main([*export, "--overwrite"]) == 0
    short = summary.run_id[:8]
    capsys.readouterr()
    assert main(["runs", "--mlruns", str(mlruns)]) == 0
    assert short in capsys.readouterr().out  # what the table prints
    # The 8 digits `runs` prints name the run everywhere.
    out = tmp_path / "short"
    assert main(["export", short, "--out", str(out), "--mlruns", str(mlruns)]) == 0
    assert summary.run_id in capsys.readouterr().err  # says which run it exported, in full
    assert program_state(load_export(out, ScopedQA(store))[0]) == program_state(
        load_export(summary.export_dir, ScopedQA(store))[0]
    )
    assert export_run(short, tmp_path / "again", mlruns).run_id == summary.run_id
    compared = compare_runs(short, short, mlruns)
    assert compared.attrs["run_a"] == summary.run_id and float(compared.iloc[-1]["difference"]) == 0.0
    assert main(["runs", "--compare", short, short, "--mlruns", str(mlruns)]) == 0
    assert f"run {summary.run_id} (B) - run {summary.run_id} (A)" in " ".join(capsys.readouterr().err.split())
    assert champion(short, mlruns) == summary.prompt_versions
    assert main(["champion", "ffffffffffff", "--mlruns", str(mlruns)]) == 2
    assert "no run id starts with 'ffffffffffff'" in capsys.readouterr().err


def test_a_candidate_with_a_gate_failure_is_rejected_and_the_baseline_kept(
    tmp_path: Path, mlflow_template: Path, store: Store
) -> None:
    # The validation chip's only document is labelled forbidden: citing it is a wrong-property citation.
    # The LM abstains (cites nothing) until the result phase, then cites what it is shown.
    dev = [e for i, e in enumerate(demo_examples()) if i % 2 == 1]
    dev = [
        e.model_copy(update={"gold_documents": (), "forbidden_documents": e.scope.document_ids})
        if e.case == "chip"
        else e
        for e in dev
    ]
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces", val=dev))
    phase = {"cite": False}
    base = cooperative()

    def respond(prompt: str) -> Any:
        out = base(prompt)
        if "answers" in out and not phase["cite"]:
            for line in out["answers"]:
                line["answer"], line["sentence_ids"] = "", []  # finds no answer: cites nothing
        return out

    def progress(event: ProgressEvent) -> None:
        phase["cite"] = event.phase in ("result", "log", "done")

    summary = run(config, mlruns, store, respond, progress)
    assert not summary.selected and summary.rejection is not None and "wrong-property" in summary.rejection
    assert int(summary.result.loc["all", "wrong_property_citations"]) >= 1
    assert int(summary.baseline.loc["all", "wrong_property_citations"]) == 0

    loaded, manifest = load_export(summary.export_dir, ScopedQA(store))
    assert program_state(loaded) == program_state(ScopedQA(store))  # the baseline, not the candidate
    assert manifest.config.experiment["selected"] is False
    client = open_tracker(mlruns).client
    logged = client.get_run(summary.run_id)
    assert logged.data.tags[TAG_SELECTED] == "false" and logged.data.metrics["selected"] == 0.0
    assert "candidate/prompts.md" in {f.path for f in client.list_artifacts(summary.run_id, "candidate")}
    with pytest.raises(TrackingError, match="rejected"):
        champion(summary.run_id, mlruns)


def test_the_budget_stops_the_job_and_fails_the_run(tmp_path: Path, mlflow_template: Path, store: Store) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces"), budget=2)
    with pytest.raises(BudgetExceededError, match="budget of 2 calls") as info:
        run(config, mlruns, store)
    assert info.value.calls == 3
    (logged,) = open_tracker(mlruns).client.search_runs([experiment_id(open_tracker(mlruns), "tests")])
    assert logged.info.status == "FAILED" and "budget" in logged.data.tags[TAG_STOP]
    assert logged.data.metrics["lm_calls.compile"] == 3 and logged.data.metrics["lm_calls.baseline"] == 12


@pytest.fixture
def memory_cache() -> Iterator[None]:
    """DSPy's response cache swapped for an empty in-memory one for the test."""
    previous = dspy.cache
    dspy.cache = Cache(enable_disk_cache=False, enable_memory_cache=True, disk_cache_dir=None)
    try:
        yield
    finally:
        dspy.cache = previous


def test_a_rerun_is_answered_from_the_lm_cache(
    tmp_path: Path, mlflow_template: Path, store: Store, memory_cache: None
) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces"))
    lm = scripted_lm(cooperative())
    lm._cache_responses = True  # DummyLM opts out of DSPy's cache; a real LM does not
    first = run(config, mlruns, store, lm=lm)
    again = run(config, mlruns, store, lm=lm)
    # Even the first run reuses answers: the result phase asks the frozen decompose step what the baseline asked.
    assert 0 < first.new_lm_calls < first.lm_calls
    assert again.lm_calls == first.lm_calls and again.new_lm_calls == 0 and again.tokens == 0
    assert program_state(load_export(again.export_dir, ScopedQA(store))[0]) == program_state(
        load_export(first.export_dir, ScopedQA(store))[0]
    )


def _owned_run(tracker: Tracker, tags: dict[str, str]) -> str:
    run_id = start_run(tracker, experiment_id(tracker, "reaper"), "r", {"scoperag.config_hash": "x"})
    set_tags(tracker, run_id, tags)
    return run_id


def test_running_runs_of_dead_processes_are_marked_failed(tmp_path: Path, mlflow_template: Path) -> None:
    tracker = open_tracker(fresh_mlruns(mlflow_template, tmp_path / "mlruns"))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    host = socket.gethostname()
    dead = _owned_run(tracker, {TAG_PID: str(gone.pid), TAG_HOST: host})
    reused = _owned_run(tracker, {TAG_PID: str(os.getpid()), TAG_HOST: host, TAG_PID_START: "1"})
    alive = _owned_run(tracker, {})  # owner tags of this very process
    elsewhere = _owned_run(tracker, {TAG_PID: str(gone.pid), TAG_HOST: host + "-other"})
    assert sorted(reap_stale_runs(tracker)) == sorted([dead, reused])
    status = {r: tracker.client.get_run(r).info.status for r in (dead, reused, alive, elsewhere)}
    assert status == {dead: "FAILED", reused: "FAILED", alive: "RUNNING", elsewhere: "RUNNING"}
    assert "ended without closing the run" in tracker.client.get_run(dead).data.tags[TAG_STOP]


@pytest.mark.slow
def test_dspy_autolog_traces_the_run(tmp_path: Path, mlflow_template: Path, store: Store) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces"), extra="dspy_autolog = true")
    summary = run(config, mlruns, store)
    tracker = open_tracker(mlruns)
    assert tracker.client.get_run(summary.run_id).info.status == "FINISHED"
    traces = tracker.client.search_traces(locations=[experiment_id(tracker, "tests")])
    assert len(traces) > 0


def test_bad_data_is_refused_before_anything_is_logged(tmp_path: Path, store: Store) -> None:
    traces = write_data(tmp_path / "traces")
    missing_index = write_config(tmp_path, traces, data=f"index_dir = '{tmp_path / 'none'}'")
    with pytest.raises(ExperimentConfigError, match="scoperag index datasets/demo --out") as info:
        run_experiment(missing_index, mlruns=tmp_path / "mlruns")
    assert info.value.field == "data.index_dir"
    with_manifest = write_config(
        tmp_path, traces, data=f"index_dir = '{tmp_path / 'none'}'\ncorpus_manifest = 'elsewhere/corpus.toml'"
    )
    with pytest.raises(
        ExperimentConfigError, match=r"scoperag index datasets/demo --manifest elsewhere/corpus\.toml --out"
    ):
        run_experiment(with_manifest, mlruns=tmp_path / "mlruns")
    write_examples(traces / "dev.jsonl", [e for e in demo_examples() if e.case != "chip"])
    with pytest.raises(ExperimentConfigError, match=r"no example of case\(s\) chip"):
        run(write_config(tmp_path, traces), tmp_path / "mlruns", store)
    assert not (tmp_path / "mlruns").exists()


def test_a_candidate_that_does_not_improve_is_not_selected(tmp_path: Path, mlflow_template: Path, store: Store) -> None:
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    config = write_config(tmp_path, write_data(tmp_path / "traces"), require_improvement="true")
    summary = run(config, mlruns, store)
    assert not summary.selected and summary.rejection is not None
    assert summary.rejection.startswith("no improvement on validation")
