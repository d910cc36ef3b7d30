"""A local Ray (`--ray`, `--ray local`) listens on 127.0.0.1 only: its control plane has no business on the
network. Every Ray process this test process started is looked at, after tasks ran on its workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.cluster import map_tasks
from tests.support.sockets import listeners, process_tree

pytestmark = [
    pytest.mark.usefixtures("local_ray"),
    pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from Linux's /proc"),
]


def _square(shared: int, item: int, attempt: int) -> int:
    return shared * item * item


def test_no_process_of_a_local_ray_listens_outside_127_0_0_1() -> None:
    assert map_tasks(_square, 1, list(range(8))).results == [i * i for i in range(8)]  # the workers are up
    found = listeners(process_tree(os.getpid()))
    commands = {listener.command for listener in found}
    assert {"gcs_server", "raylet"} <= commands, commands  # Ray's own servers were found and looked at
    assert any(c.startswith("ray::") for c in commands), commands  # and its workers
    outside = [listener for listener in found if not listener.loopback_only]
    assert outside == [], [(x.command, str(x.address), x.port) for x in outside]
