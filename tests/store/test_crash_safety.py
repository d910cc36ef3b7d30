"""A build killed with SIGKILL at any moment leaves the previous index usable."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pipeline.store import open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder

log = logging.getLogger(__name__)
WORDS = "rent lease roof valuation tenant landlord parcel inspection offer title deed plumbing".split()


def _corpus(root: Path, documents: int) -> Path:
    root.mkdir(parents=True)
    for i in range(documents):
        body = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(400))
        (root / f"doc{i:04d}.txt").write_text(f"Document {i}. {body}\f{body}")
    return root


def _start_build(source: Path, out: Path) -> subprocess.Popen[bytes]:
    """A real `scoperag index` process building `source` into `out`."""
    command = [sys.executable, "-m", "pipeline.cli", "index", str(source), "--out", str(out)]
    return subprocess.Popen(
        [*command, "--embedder", "hash", "--hash-dim", "32"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
    )


def _wait_for_scratch(proc: subprocess.Popen[bytes], out: Path) -> float:
    """Poll until the build's scratch directory appears (imports done, writing begun); that moment."""
    while not any(out.glob(".building-*")) and proc.poll() is None:
        time.sleep(0.0005)
    return time.perf_counter()


def _build_seconds(source: Path, out: Path) -> float:
    """How long a build writes: from its scratch directory appearing to the process exiting."""
    proc = _start_build(source, out)
    started = _wait_for_scratch(proc, out)
    assert proc.wait() == 0
    return time.perf_counter() - started


def _kill_build_after(source: Path, out: Path, delay: float) -> None:
    """Start a build and SIGKILL it `delay` s after it began writing."""
    proc = _start_build(source, out)
    _wait_for_scratch(proc, out)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def _run_kills(tmp_path: Path, fractions: list[float]) -> dict[str, int]:
    """Kill builds at `fractions` of the measured write time; which index each one left."""
    old = _corpus(tmp_path / "old", 3)
    new = _corpus(tmp_path / "new", 400)
    out = tmp_path / "index"
    seconds = _build_seconds(new, tmp_path / "measured")
    build_index(old, out, HashEmbedder(32))
    outcomes = {"old": 0, "new": 0}
    for fraction in fractions:
        delay = fraction * seconds
        _kill_build_after(new, out, delay)
        store = open_store(out, HashEmbedder(32), verify_hashes=True)
        count = len(store.catalog.documents)
        assert count in (3, 400), f"mixed index after kill at {delay:.3f}s: {count} documents"
        assert store.search_chunks("roof tenant", k=3), "published index must answer queries"
        outcomes["old" if count == 3 else "new"] += 1
        if count == 400:  # the kill came after publishing: start over from the old corpus
            build_index(old, out, HashEmbedder(32))
    log.info("index build kills over a %.2f s write: %s (old: previous index kept; new: published)", seconds, outcomes)
    return outcomes


def test_killed_builds_leave_previous_index_usable(tmp_path: Path) -> None:
    outcomes = _run_kills(tmp_path, [0.1, 0.5, 0.9])
    assert outcomes["old"] >= 1


@pytest.mark.slow
def test_twenty_random_kill_points(tmp_path: Path) -> None:
    import random

    rng = random.Random(20)
    outcomes = _run_kills(tmp_path, [rng.uniform(0.0, 1.1) for _ in range(20)])
    assert sum(outcomes.values()) == 20


def test_a_killed_build_resumes_without_embedding_again(tmp_path: Path) -> None:
    import sqlite3

    from pipeline.store.vector_cache import CACHE_NAME

    source = _corpus(tmp_path / "new", 400)
    out = tmp_path / "index"
    proc = _start_build(source, out)
    stored = 0
    while proc.poll() is None and stored == 0:  # kill once the first embedded batches are committed
        time.sleep(0.002)
        if (out / CACHE_NAME).is_file():
            with contextlib.suppress(sqlite3.OperationalError), sqlite3.connect(out / CACHE_NAME) as db:
                stored = db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    if proc.poll() is not None:
        pytest.skip("the build finished before it could be killed")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(out / CACHE_NAME) as db:
        kept = db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    report = build_index(source, out, HashEmbedder(32))
    assert kept >= stored > 0
    assert report.embedded <= report.chunks + report.documents - kept  # what the killed build stored is reused
    build_index(source, tmp_path / "fresh", HashEmbedder(32))
    resumed, fresh = (
        np.load(d / open_store(d, HashEmbedder(32)).manifest.generation / "chunks_dense" / "vectors.npy")
        for d in (out, tmp_path / "fresh")
    )
    assert len(resumed) == report.chunks
    np.testing.assert_array_equal(resumed, fresh)  # the same vectors as a build from nothing
