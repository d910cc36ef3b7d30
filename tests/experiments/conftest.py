"""Fixtures of the experiment tests: an empty MLflow database to copy, the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.store import open_tracker
from pipeline.store import Store, open_store
from pipeline.store.embedders import HashEmbedder


@pytest.fixture(scope="session")
def mlflow_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty, migrated MLflow database (creating one takes seconds; copying it takes none)."""
    root = tmp_path_factory.mktemp("mlflow-template")
    open_tracker(root).client.search_experiments()
    return root / "mlflow.db"


@pytest.fixture(scope="module")
def store(demo_index_dir: Path, embedder: HashEmbedder) -> Store:
    return open_store(demo_index_dir, embedder)
