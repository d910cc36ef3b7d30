"""Shared fixtures: the demo corpus indexed once per session with the deterministic embedder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from pipeline.store import Store, open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder

ROOT = Path(__file__).resolve().parents[1]
DEMO_DIR = ROOT / "datasets" / "demo"


@pytest.fixture(scope="session")
def embedder() -> HashEmbedder:
    return HashEmbedder(64)


@pytest.fixture(scope="session")
def demo_index_dir(tmp_path_factory: pytest.TempPathFactory, embedder: HashEmbedder) -> Path:
    """The demo corpus indexed with the deterministic embedder (built once per session)."""
    out = tmp_path_factory.mktemp("demo-index")
    build_index(DEMO_DIR, out, embedder)
    return out


@pytest.fixture
def demo_store(demo_index_dir: Path, embedder: HashEmbedder) -> Store:
    """A fresh Store over the demo index, with its store-call log switched on."""
    store = open_store(demo_index_dir, embedder)
    store.call_log = []
    return store


@pytest.fixture(scope="session")
def local_ray() -> Iterator[None]:
    """One local Ray with 2 CPUs for every Ray test of the session (started on first use)."""
    pytest.importorskip("ray", reason="Ray is not installed (it is in the dev extra: make setup)")
    from pipeline.cluster import LOCAL, ray_session

    with ray_session(LOCAL):
        yield
