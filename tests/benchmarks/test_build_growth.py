"""benchmarks/annual_reports.py and the growth part of benchmarks/build.py: the synthetic corpus is of
annual-report shape and reproducible, and each build phase gets its own time and memory."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pipeline.store.reading import read_source
from tests.support.scripts import load_benchmark


def digest(folder: Path) -> str:
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.rglob("*.html")))).hexdigest()


def test_the_synthetic_reports_print_as_pages_with_statements_and_reproduce(tmp_path: Path) -> None:
    reports = load_benchmark("annual_reports")
    files, pages = reports.write_corpus(tmp_path / "a", 300)
    assert pages >= 300 and files == len(list((tmp_path / "a").rglob("*.html")))
    reports.write_corpus(tmp_path / "b", 300)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    first = sorted((tmp_path / "a").rglob("*.html"))[0]
    source = read_source(first, "company-0000/annual-report.html")
    assert source.paged_by == "page breaks" and len(source.pages) >= reports.REPORT_PAGES[0]
    text = "\n".join(source.pages)
    assert "Total net sales" in text or "Net income" in text or "Goodwill" in text
    assert "Year Ended December 31" in text and reports.company(0) in text


def test_growth_phases_split_the_build_by_its_progress() -> None:
    build = load_benchmark("build")
    events = [
        (1.0, "read", ""),
        (2.0, "embed", ""),
        (10.0, "read", ""),
        (14.0, "embed", ""),
        (15.0, "index", "dense index of 9 chunks"),
        (16.0, "index", "dense index of 9 chunks (9 of 9 added)"),
        (17.0, "index", "BM25 of 9 chunks"),
        (19.0, "index", "published"),
    ]
    samples = [(t + 0.5, 100.0 * t) for t in range(20)]
    phases = build.growth_phases(events, samples, 19.0)
    assert [(p["phase"], p["seconds"]) for p in phases] == [
        ("read", 9.0),
        ("embed (after reading)", 4.0),
        ("before the index steps", 1.0),
        ("index: dense index of 9 chunks", 2.0),
        ("index: BM25 of 9 chunks", 2.0),
    ]
    assert phases[0]["peak_tree_rss_mb"] == 900.0  # the sample at 9.5 s, the last inside reading
