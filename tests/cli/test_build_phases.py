"""The line `scoperag index` ends with: each phase of the build, its time and its peak memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pipeline.cli.build_phases import BuildPhases, phase_of, tree_rss_mb
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder


def test_updates_are_named_by_phase() -> None:
    assert phase_of("read", "12 pages", reading_done=False) == "read"
    assert phase_of("embed", "chunks", reading_done=False) == "read"  # embedding alongside reading
    assert phase_of("embed", "chunks", reading_done=True) == "embed"
    assert phase_of("index", "dense index of 290,309 chunks (65,536 of 290,309 added)", True) == "dense index of chunks"
    assert phase_of("index", "page index of 49,723 pages", True) == "page index of pages"
    assert phase_of("index", "publish", True) == "publish"


def test_each_phase_is_timed_on_the_clock_and_forwarded() -> None:
    now = [0.0]
    forwarded: list[tuple[Any, ...]] = []
    phases = BuildPhases(lambda *a, **k: forwarded.append(a), clock=lambda: now[0])
    with phases:
        for t, update in [
            (1.0, ("read", 0, 2, "0 pages")),
            (3.0, ("embed", 10, 20, "chunks")),
            (5.0, ("read", 2, 2, "9 pages")),
            (9.0, ("embed", 20, 20, "chunks")),
            (10.0, ("index", 0, 2, "dense index of 20 chunks")),
            (10.5, ("index", 0, 2, "dense index of 20 chunks (20 of 20 added)")),
            (12.0, ("index", 1, 2, "publish")),
            (12.5, ("index", 2, 2, "published")),
        ]:
            now[0] = t
            phases(*update)
        now[0] = 13.0
    assert [(p["phase"], p["seconds"]) for p in phases.record()] == [
        ("start", 1.0),
        ("read", 4.0),
        ("embed", 5.0),
        ("dense index of chunks", 2.0),
        ("publish", 1.0),
    ]
    assert len(forwarded) == 8
    assert phases.line().startswith("phases (time, peak memory with the reading processes): start 1.0 s (")


def test_a_real_build_reports_every_phase_with_memory(tmp_path: Path) -> None:
    source = tmp_path / "docs"
    source.mkdir()
    for i in range(3):
        (source / f"d{i}.md").write_text(f"# Report {i}\n\nNet sales were {i + 1},000 in the year.\f Page two.\n")
    with BuildPhases() as phases:
        build_index(source, tmp_path / "index", HashEmbedder(16), progress=phases)
    names = [p["phase"] for p in phases.record()]
    assert names[:2] == ["start", "read"] and names[-1] == "publish" and "BM25 of chunks" in names
    assert all(isinstance(p["peak_rss_mb"], int) for p in phases.record())
    assert tree_rss_mb() > 10
