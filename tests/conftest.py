"""Shared fixtures: the demo corpus indexed once per session with the deterministic embedder; and a session that
leaves nothing running (tests/support/reaper.py): every process it starts carries the session's mark, a reaper
ends them however pytest ends, SIGTERM ends the run as Ctrl-C does (fixtures torn down), what a killed earlier
session left is swept at the start, and a process of the session still alive at its end fails the run."""

from __future__ import annotations

import os
import secrets
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
# This session's mark, inherited by every process it starts (a pytest started by a test makes its own).
SESSION = f"{os.getpid()}-{secrets.token_hex(6)}"
os.environ["SCOPERAG_TEST_SESSION"] = SESSION

from pipeline.store import Store, open_store  # noqa: E402
from pipeline.store.build import build_index  # noqa: E402
from pipeline.store.embedders import HashEmbedder  # noqa: E402
from tests.support import reaper  # noqa: E402

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


# Seconds the session's end waits for its last processes (a local Ray's workers exit a few seconds after it).
END_WAIT_SECONDS = 30.0


def pytest_sessionstart(session: pytest.Session) -> None:
    swept = reaper.sweep()
    if swept:
        _say(session, f"swept what earlier killed test runs left: {'; '.join(swept)}")
    started = reaper.start_reaper(SESSION)
    # a local Ray keeps its session folders in a folder of this session's, removed with it
    ray_root = Path(tempfile.mkdtemp(prefix="scoperag-ray-"))
    started.remove_on_end(ray_root)
    os.environ["RAY_TMPDIR"] = str(ray_root)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")  # as Ctrl-C: pytest tears every fixture down, then ends

    signal.signal(signal.SIGTERM, stop)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """After every fixture is torn down: a process of this session still alive fails the run (then it is ended)."""
    deadline = time.monotonic() + END_WAIT_SECONDS
    alive = reaper.outliving(SESSION)
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = reaper.outliving(SESSION)
    if alive:
        named = "\n  ".join(reaper.describe(pid) for pid in alive)
        _say(session, f"processes the tests started are still running after the session ({len(alive)}):\n  {named}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    running = reaper.current()
    if running is not None:
        running.close()


def _say(session: pytest.Session, text: str) -> None:
    """A line on pytest's own terminal (outside any test's captured output)."""
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.write_line(text, red=True)
