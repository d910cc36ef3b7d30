"""Fixtures of the experiment tests: an empty MLflow database to copy, the demo store, one finished job."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.runner import ProgressEvent, RunSummary
from experiments.store import open_tracker
from pipeline.store import Store, open_store
from pipeline.store.embedders import HashEmbedder
from tests.support.experiments import fresh_mlruns, run, write_config, write_data


@pytest.fixture(scope="session")
def mlflow_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty, migrated MLflow database (creating one takes seconds; copying it takes none)."""
    root = tmp_path_factory.mktemp("mlflow-template")
    open_tracker(root).client.search_experiments()
    return root / "mlflow.db"


@pytest.fixture(scope="module")
def store(demo_index_dir: Path, embedder: HashEmbedder) -> Store:
    return open_store(demo_index_dir, embedder)


@pytest.fixture(scope="module")
def finished(
    tmp_path_factory: pytest.TempPathFactory, mlflow_template: Path, store: Store
) -> tuple[RunSummary, Path, list[ProgressEvent]]:
    """One small BootstrapFewShot job, run once for the tests that read its record."""
    where = tmp_path_factory.mktemp("job")
    mlruns = fresh_mlruns(mlflow_template, where / "mlruns")
    events: list[ProgressEvent] = []
    summary = run(write_config(where, write_data(where / "traces")), mlruns, store, progress=events.append)
    return summary, mlruns, events
