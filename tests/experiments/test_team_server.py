"""A job against a real `mlflow server` on a real PostgreSQL: runs, metrics, artifacts and prompt versions land
on the server, and every reading command finds them through --tracking-uri."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from experiments.runner import run_experiment
from experiments.runs import champion, compare_runs, export_run, list_runs
from experiments.store import open_tracker
from experiments.tracking import CHAMPION, prompt_name
from pipeline.cli.main import main
from pipeline.export import load_export
from pipeline.program.module import ScopedQA
from pipeline.store import Store
from tests.support.experiments import write_config, write_data
from tests.support.fakes import cooperative, scripted_lm
from tests.support.team_server import TeamServer, team_server, why_not

pytestmark = pytest.mark.skipif(why_not() is not None, reason=why_not() or "")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamServer]:
    with team_server(tmp_path_factory.mktemp("team")) as running:
        yield running


def test_a_job_logs_runs_metrics_artifacts_and_prompts_to_the_server(
    server: TeamServer,
    tmp_path: Path,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = write_config(tmp_path, write_data(tmp_path / "traces"))
    mlruns = tmp_path / "scratch"
    summary = run_experiment(
        config,
        mlruns=mlruns,
        tracking_uri=server.tracking_uri,
        store=store,
        lm_factory=lambda spec: scripted_lm(cooperative()),
    )
    assert not (mlruns / "mlflow.db").exists()  # nothing went to the local store

    client = open_tracker(mlruns, server.tracking_uri).client
    logged = client.get_run(summary.run_id)
    assert logged.info.status == "FINISHED" and logged.info.artifact_uri.startswith("mlflow-artifacts:")
    metrics = logged.data.metrics
    assert metrics["lm_calls.baseline"] == 12 and metrics["result.all.wrong_property_citations"] == 0
    assert {f.path for f in client.list_artifacts(summary.run_id)} >= {"export", "evaluation", "prompts.md"}
    # the artifacts live in the shared root the server was given, not beside the job
    assert list(server.artifact_root.rglob("program.json")) and list(server.artifact_root.rglob("result-examples.csv"))

    for module, version in summary.prompt_versions.items():
        prompt = client.get_prompt_version(prompt_name(module), version)
        assert prompt.tags["run_id"] == summary.run_id and prompt.template
    assert champion(summary.run_id, mlruns, uri=server.tracking_uri) == summary.prompt_versions
    module = next(iter(summary.prompt_versions))
    assert client.get_prompt_version_by_alias(prompt_name(module), CHAMPION).version == summary.prompt_versions[module]

    exported = export_run(summary.run_id, tmp_path / "export", mlruns, uri=server.tracking_uri)
    assert exported.run_id == summary.run_id
    load_export(tmp_path / "export", ScopedQA(store))
    table = list_runs(mlruns, uri=server.tracking_uri)
    assert summary.run_id in set(table["run_id"])
    compared = compare_runs(summary.run_id, summary.run_id, mlruns, uri=server.tracking_uri)
    assert (compared["difference"] == 0).all()

    # the command line finds the run through MLFLOW_TRACKING_URI as through --tracking-uri
    capsys.readouterr()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server.tracking_uri)
    assert main(["runs", "--mlruns", str(tmp_path / "elsewhere"), "--json"]) == 0
    assert summary.run_id in {row["run_id"] for row in json.loads(capsys.readouterr().out)}
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    assert main(["runs", "--mlruns", str(mlruns), "--tracking-uri", server.tracking_uri, "--json"]) == 0
    assert summary.run_id in {row["run_id"] for row in json.loads(capsys.readouterr().out)}
