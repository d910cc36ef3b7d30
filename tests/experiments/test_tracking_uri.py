"""Where runs go: --tracking-uri, else MLFLOW_TRACKING_URI, else the project's sqlite store."""

from __future__ import annotations

from pathlib import Path

from experiments.store import open_tracker
from experiments.tracking import is_local_store, resolve_tracking_uri, tracking_uri


def test_the_flag_wins_over_the_environment(tmp_path: Path) -> None:
    env = {"MLFLOW_TRACKING_URI": "http://from-env:5000"}
    assert resolve_tracking_uri("http://flag:5000", tmp_path, env) == "http://flag:5000"


def test_the_environment_wins_over_the_project_store(tmp_path: Path) -> None:
    assert resolve_tracking_uri(None, tmp_path, {"MLFLOW_TRACKING_URI": " http://env:5000 "}) == "http://env:5000"


def test_without_either_the_project_sqlite_store_is_used(tmp_path: Path) -> None:
    uri = resolve_tracking_uri(None, tmp_path / "mlruns", {"MLFLOW_TRACKING_URI": "  "})
    assert uri == f"sqlite:///{(tmp_path / 'mlruns').resolve()}/mlflow.db"
    assert is_local_store(uri, tmp_path / "mlruns")


def test_a_tracker_on_another_store_keeps_artifacts_where_that_store_says(tmp_path: Path) -> None:
    from experiments.tracking import experiment_id

    other = f"sqlite:///{tmp_path / 'shared.db'}"
    tracker = open_tracker(tmp_path / "mlruns", other)
    assert tracker.uri == other and not tracker.local
    created = tracker.client.get_experiment(experiment_id(tracker, "team"))
    assert not created.artifact_location.startswith((tmp_path / "mlruns").as_uri())
    assert (tmp_path / "shared.db").is_file() and not (tmp_path / "mlruns" / "mlflow.db").exists()
    own = open_tracker(tmp_path / "mlruns")
    assert own.uri == tracking_uri(tmp_path / "mlruns") and own.local
    mine = own.client.get_experiment(experiment_id(own, "mine"))
    assert mine.artifact_location == (tmp_path / "mlruns" / "artifacts" / "mine").resolve().as_uri()
