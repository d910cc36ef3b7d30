"""Run by tests/test_killed_runs.py in a pytest of its own (this file is no test module of the suite): the
scale-out tests' servers, a local Ray and the team server (PostgreSQL and `mlflow server`), held until that
pytest is stopped or killed. The file named by $HELD_READY is written once all of them are up."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.team_server import TeamServer, team_server


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TeamServer]:
    with team_server(tmp_path_factory.mktemp("team")) as running:
        yield running


def test_servers_held_until_the_run_is_killed(local_ray: None, team: TeamServer) -> None:
    Path(os.environ["HELD_READY"]).write_text(team.tracking_uri)
    time.sleep(900)
