"""Optimisation jobs and sweeps on a local Ray (2 CPUs): the single-process metrics, one parent run per sweep."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.runner import run_experiment
from experiments.store import open_tracker
from experiments.sweep import TAG_SWEEP, run_sweep
from experiments.tracking import TAG_PARENT
from pipeline.store import Store
from tests.support.experiments import fresh_mlruns, run, write_config, write_data
from tests.support.fakes import cooperative, scripted_lm

pytestmark = pytest.mark.usefixtures("local_ray")


def _scripted(spec: str) -> object:
    return scripted_lm(cooperative())


def test_optimize_on_ray_gives_the_single_process_metrics(
    tmp_path: Path, mlflow_template: Path, store: Store, demo_index_dir: Path
) -> None:
    traces = write_data(tmp_path / "traces")
    config = write_config(tmp_path, traces, data=f'index_dir = "{demo_index_dir}"')
    alone = run(config, fresh_mlruns(mlflow_template, tmp_path / "one"), store)
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "ray")
    fanned = run_experiment(config, mlruns=mlruns, store=store, lm_factory=_scripted, ray="local")
    assert fanned.baseline.equals(alone.baseline) and fanned.result.equals(alone.result)
    assert (fanned.lm_calls, fanned.selected) == (alone.lm_calls, alone.selected)
    metrics = open_tracker(mlruns).client.get_run(fanned.run_id).data.metrics
    assert metrics["lm_calls.baseline"] == metrics["lm_calls.result"] == 12 and metrics["ray.retries"] == 0


def test_sweep_runs_each_config_as_a_child_and_compares_with_the_first(
    tmp_path: Path, mlflow_template: Path, demo_index_dir: Path
) -> None:
    traces = write_data(tmp_path / "traces")
    index = f'index_dir = "{demo_index_dir}"'
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_config(tmp_path / "a", traces, data=index, name='"first"')
    second = write_config(tmp_path / "b", traces, data=index, name='"second"', modules='["answer"]')
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "mlruns")
    said: list[str] = []
    sweep = run_sweep([first, second], mlruns=mlruns, ray="local", lm_factory=_scripted, progress=said.append)
    assert sweep.errors == [None, None] and all(c is not None for c in sweep.children)
    running = "2 configs running as Ray tasks"
    assert said == [
        "starting Ray (local)",
        f"{running}, 0 finished",
        f"{running}, 1 finished",
        f"{running}, 2 finished",
    ]
    client = open_tracker(mlruns).client
    parent = client.get_run(sweep.run_id)
    assert parent.info.status == "FINISHED" and parent.data.tags[TAG_SWEEP] == "true"
    assert parent.data.metrics["children.finished"] == 2
    for child in sweep.children:
        assert child is not None
        logged = client.get_run(child.run_id)
        assert logged.data.tags[TAG_PARENT] == sweep.run_id and logged.info.status == "FINISHED"
        assert logged.info.experiment_id == parent.info.experiment_id
    table = sweep.comparison
    assert set(table["config"]) == {"second"} and list(table["case"])[-1] == "all"
    assert {"difference", "ci_low", "ci_high", "n"} <= set(table.columns)
    assert {f.path for f in client.list_artifacts(sweep.run_id, "sweep")} == {"sweep/comparison.csv"}


RANDOM_SEARCH = "[optimizer_params]\nmax_bootstrapped_demos = 1\nnum_candidate_programs = 1\n"


def test_random_search_candidates_on_ray_choose_the_single_process_program(
    tmp_path: Path, mlflow_template: Path, store: Store, demo_index_dir: Path
) -> None:
    traces = write_data(tmp_path / "traces")
    config = write_config(
        tmp_path,
        traces,
        data=f'index_dir = "{demo_index_dir}"',
        extra=RANDOM_SEARCH,
        optimizer='"bootstrap_random_search"',
    )
    alone = run(config, fresh_mlruns(mlflow_template, tmp_path / "one"), store)
    mlruns = fresh_mlruns(mlflow_template, tmp_path / "ray")
    fanned = run_experiment(config, mlruns=mlruns, store=store, lm_factory=_scripted, ray="local")
    assert (fanned.export_dir / "program.json").read_bytes() == (alone.export_dir / "program.json").read_bytes()
    assert fanned.result.equals(alone.result) and fanned.lm_calls == alone.lm_calls
    one = open_tracker(tmp_path / "one").client.get_run(alone.run_id).data.metrics
    other = open_tracker(mlruns).client.get_run(fanned.run_id).data.metrics
    assert one["lm_calls.compile"] == other["lm_calls.compile"] > 0
