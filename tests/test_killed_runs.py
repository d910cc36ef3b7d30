"""A test run stopped by `timeout -s TERM` or killed by `kill -9` while the scale-out tests' servers run (a local
Ray, PostgreSQL, `mlflow server` with its workers) leaves no process and no folder of theirs (issue 36, D5).

The run is a pytest of its own over tests/support/held_servers.py, which holds those servers; once they are up
it is stopped. Its processes are found by a variable of the environment it was given, which each of them inherits;
its folders would be under the TMPDIR it was given. Whatever a failing run left is killed by the test itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.support.reaper import SESSION_ENV, describe, start_time, with_descendants
from tests.support.team_server import why_not

ROOT = Path(__file__).resolve().parents[1]
# Seconds the servers may take to come up on 2 busy cores, and what is left may take to go.
START_SECONDS = 240.0
GONE_SECONDS = 60.0

pytestmark = pytest.mark.skipif(why_not() is not None, reason=why_not() or "")


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _held(ready: Path) -> list[int]:
    """The live processes the run started, wherever they went: each inherited $HELD_READY from it."""
    needle = f"HELD_READY={ready}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            held = needle in (entry / "environ").read_bytes().split(b"\0")
            zombie = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0] == "Z"
        except OSError:
            continue
        if held and not zombie:
            found.append(int(entry.name))
    return found


def _reapers(pytest_pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"tests.support.reaper" in command and any(a.startswith(f"{pytest_pid}-".encode()) for a in command):
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("how", ["timeout -s TERM", "kill -9"])
def test_a_stopped_or_killed_scale_out_run_leaves_no_process_or_folder(tmp_path: Path, how: str) -> None:
    # a short TMPDIR of its own: Ray's socket paths under it must stay within 107 bytes
    temp, ready = Path(tempfile.mkdtemp(prefix="sk-", dir="/tmp")), tmp_path / "ready"
    temp.chmod(0o755)  # PostgreSQL's own user makes its cluster inside
    tree: dict[int, str | None] = {}
    try:
        _stop_and_look(tmp_path, temp, ready, how, tree)
    finally:
        for pid in _left(ready, tree):  # what a failing run left is ended here, not left to the machine
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def _left(ready: Path, tree: dict[int, str | None]) -> list[int]:
    """The run's processes still alive: those holding its variable, and those seen in its tree before it was stopped
    (some rewrite their environment: Ray's agents), the same processes by their start time."""
    return sorted({*_held(ready), *(pid for pid, start in tree.items() if start and start_time(pid) == start)})


def _stop_and_look(tmp_path: Path, temp: Path, ready: Path, how: str, tree: dict[int, str | None]) -> None:
    env = {k: v for k, v in os.environ.items() if k != SESSION_ENV}
    env.update(TMPDIR=str(temp), HELD_READY=str(ready))
    run = [
        *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
        *("--basetemp", str(tmp_path / "basetemp"), "tests/support/held_servers.py"),
    ]
    command = ["timeout", "-s", "TERM", "3600", *run] if how == "timeout -s TERM" else run
    log = (tmp_path / "run.log").open("wb")
    started = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not ready.exists():
            assert started.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
            assert time.monotonic() < deadline, (tmp_path / "run.log").read_text()[-3000:]
            time.sleep(0.5)
        pytest_pid = _children(started.pid)[0] if how == "timeout -s TERM" else started.pid
        tree.update((pid, start_time(pid)) for pid in with_descendants([pytest_pid, *_held(ready)]))
        tree.pop(pytest_pid, None)
        commands = " ".join(describe(pid) for pid in _held(ready))
        assert "mlflow" in commands and "postgres" in commands and "raylet" in commands, commands
        assert any(temp.iterdir())  # the cluster's and Ray's folders
        if how == "kill -9":
            os.kill(pytest_pid, signal.SIGKILL)
        else:
            os.kill(started.pid, signal.SIGTERM)  # what `timeout` does when its time is up: TERM to the run
        started.wait(GONE_SECONDS)
    finally:
        if started.poll() is None:
            os.killpg(started.pid, signal.SIGKILL)
        log.close()
    deadline = time.monotonic() + GONE_SECONDS
    while (_left(ready, tree) or _reapers(pytest_pid) or any(temp.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert [describe(p) for p in _left(ready, tree)] == [] and not _reapers(pytest_pid)
    assert list(temp.iterdir()) == []
