"""The `start` fixture: in-process HTTP apps over the demo index (tests.support.app_server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.app_server import Start, app_servers


@pytest.fixture
def start(demo_index_dir: Path, embedder: Any) -> Iterator[Start]:
    """Starts an app on 127.0.0.1:<free port> with a scripted LM; every server stops after the test."""
    with app_servers(demo_index_dir, embedder) as starter:
        yield starter
