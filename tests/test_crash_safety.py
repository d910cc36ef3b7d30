"""A build killed with SIGKILL at any moment leaves the previous index usable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.embedders import HashEmbedder
from pipeline.ingest.build import build_index
from pipeline.store import open_store

WORDS = "rent lease roof valuation tenant landlord parcel inspection offer title deed plumbing".split()


def _corpus(root: Path, documents: int) -> Path:
    root.mkdir(parents=True)
    for i in range(documents):
        body = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(400))
        (root / f"doc{i:04d}.txt").write_text(f"Document {i}. {body}\f{body}")
    return root


def _kill_build_after(source: Path, out: Path, delay: float) -> int:
    """Start a real `scoperag index` process, SIGKILL it after `delay` s; its exit code."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipeline.cli",
            "index",
            str(source),
            "--out",
            str(out),
            "--embedder",
            "hash",
            "--hash-dim",
            "32",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(Path.cwd())},
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    return proc.wait()


def _run_kills(tmp_path: Path, delays: list[float]) -> dict[str, int]:
    old = _corpus(tmp_path / "old", 3)
    new = _corpus(tmp_path / "new", 400)
    out = tmp_path / "index"
    build_index(old, out, HashEmbedder(32))
    outcomes = {"old": 0, "new": 0}
    for delay in delays:
        _kill_build_after(new, out, delay)
        store = open_store(out, HashEmbedder(32), verify_hashes=True)
        count = len(store.catalog.documents)
        assert count in (3, 400), f"mixed index after kill at {delay}s: {count} documents"
        assert store.search_chunks("roof tenant", k=3), "published index must answer queries"
        outcomes["old" if count == 3 else "new"] += 1
        if count == 400:  # the kill came after publishing: start over from the old corpus
            build_index(old, out, HashEmbedder(32))
    return outcomes


def test_killed_builds_leave_previous_index_usable(tmp_path: Path) -> None:
    outcomes = _run_kills(tmp_path, [0.3, 1.0, 2.0])
    assert outcomes["old"] >= 1


@pytest.mark.slow
def test_twenty_random_kill_points(tmp_path: Path) -> None:
    import random

    rng = random.Random(20)
    outcomes = _run_kills(tmp_path, [rng.uniform(0.1, 6.0) for _ in range(20)])
    assert sum(outcomes.values()) == 20
