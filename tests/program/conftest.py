"""Fixtures of the program tests that stand in for the embedded model: DSPy's cache on disk, the weights' load."""

from __future__ import annotations

from pathlib import Path

import dspy
import pytest
from dspy.clients.cache import Cache

from tests.support.fakes import Loads, fake_server


@pytest.fixture
def dspy_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh DSPy response cache on disk under tmp_path, never the user's ~/.dspy_cache."""
    directory = tmp_path / "dspy-cache"
    monkeypatch.setattr(dspy, "cache", Cache(True, True, str(directory), restrict_pickle=True))
    return directory


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Loads:
    """The weights' assembly and load replaced by a counting stand-in over a fake llama.cpp server."""
    from pipeline.program.lm import factory

    fake = Loads(fake_server('{"answer": "Paris"}', delay=0.02))
    monkeypatch.setattr(factory, "ensure_model_file", fake.ensure)
    monkeypatch.setattr(factory, "load_local_model", fake.load)
    return fake
