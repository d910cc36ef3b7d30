"""The EDGAR filings at real size: a whole build, each of its phases, memory, adding one filing, search latency.

    .venv/bin/python benchmarks/edgar.py                       # unpacks the archive into .scoperag/edgar/ if needed
    .venv/bin/python benchmarks/edgar.py --json benchmarks/results/edgar-build.json

Each build runs in a fresh process with the default (static) embedder and the corpus manifest
datasets/edgar/corpus.toml, through `build_index` with a progress callback that timestamps every
phase: `read` (files to pages, with pages/s: reading processes, name words, chunking and index terms of
each file), `embed` (chunks to vectors, with chunks/s; overlaps reading), and each step of `index`
(dense, BM25, page index, publish). Peak memory is the sampled RSS of the build process and its
reading processes together (`peak_tree_rss_mb`).

1. whole set into an empty directory (no caches): the figure for "the whole set in minutes";
2. the set without one filing (the largest 10-K by default) into another directory, then that filing
   added: "adding one filing" (unchanged files come from the document and vector caches);
3. search latency on the whole index: top-10 chunks, hybrid and BM25, with no scope and in one
   company's scope, over the EDGAR test questions.

The machine may be shared: the load average is printed and recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from measure import TreeRss, log, peak_rss_mb, percentiles, table, timed

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "datasets" / "edgar" / "corpus.toml"
TRACES = ROOT / "datasets" / "edgar" / "traces"
ARCHIVE = next(
    (
        a
        for a in (r / "shared" / "data" / "edgar-filings" / "edgar-filings.tar.xz" for r in ROOT.parents[:2])
        if a.is_file()
    ),
    ROOT.parent / "shared" / "data" / "edgar-filings" / "edgar-filings.tar.xz",
)
SCRATCH = ROOT / ".scoperag" / "edgar"
CORES = len(os.sched_getaffinity(0))


def filings(folder: Path) -> list[Path]:
    return sorted(folder.glob("*/*/*/primary-document.html"))


def unpack(archive: Path, scratch: Path) -> Path:
    """The unpacked folder of filings (unpacked from `archive` when it is not there yet)."""
    import tarfile

    folder = scratch / "edgar-filings"
    if not folder.is_dir():
        scratch.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
    return folder


def part_build(source: Path, out: Path) -> dict[str, Any]:
    """One build_index of `source` into `out`, with every progress update timestamped."""
    from pipeline.store.build import build_index
    from pipeline.store.embedders import StaticEmbedder

    embedder = StaticEmbedder()
    events: list[tuple[float, str, int, int | None, str]] = []
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = before.ru_utime + before.ru_stime
    start = time.perf_counter()

    def progress(
        stage: str, done: int, total: int | None, note: str = "", rate_of: tuple[int, str] | None = None
    ) -> None:
        events.append((time.perf_counter() - start, stage, done, total, note))

    with TreeRss() as tree:
        report = build_index(source, out, embedder, manifest_path=MANIFEST, progress=progress)
    seconds = time.perf_counter() - start
    # CPU time of this process and its (finished) reading processes: what the build costs whatever the load.
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "seconds": seconds,
        "cpu_seconds": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime - cpu_before,
        "documents": report.documents,
        "pages": report.pages,
        "chunks": report.chunks,
        "skipped": len(report.skipped),
        "embedded": report.embedded,
        "reused": report.reused,
        "peak_rss_mb": peak_rss_mb(),
        "peak_tree_rss_mb": max(tree.peak_mb, peak_rss_mb()),
        "phases": phases(events, seconds, report.pages, report.chunks),
    }


def phases(
    events: list[tuple[float, str, int, int | None, str]], end: float, pages: int, chunks: int
) -> list[dict[str, Any]]:
    """Start, end and length of each stage ("read", "embed") and of each step of "index"."""
    out: list[dict[str, Any]] = []
    for stage, count, unit in (("read", pages, "pages"), ("embed", chunks, "chunks")):
        times = [t for t, s, *_ in events if s == stage]
        if times:
            span = max(times[-1] - times[0], 1e-9)
            out.append(
                {
                    "phase": stage,
                    "start_s": times[0],
                    "end_s": times[-1],
                    "seconds": span,
                    "rate": count / span,
                    "unit": f"{unit}/s",
                }
            )
    steps = [(t, note) for t, s, done, total, note in events if s == "index" and total is not None and done < total]
    for i, (t, note) in enumerate(steps):
        finish = (
            steps[i + 1][0]
            if i + 1 < len(steps)
            else next((x for x, s, d, tot, _ in events if s == "index" and tot is not None and d == tot), end)
        )
        out.append({"phase": f"index: {note}", "start_s": t, "end_s": finish, "seconds": finish - t})
    return out


def part_search(index: Path) -> dict[str, Any]:
    """Search latency over the test questions: hybrid and BM25, no scope and company scope, top 10."""
    from pipeline.evaluation.examples import load_example_set
    from pipeline.settings import CoreConfig
    from pipeline.store import open_store

    store = open_store(index)
    core = CoreConfig()
    examples = [e for e in load_example_set(TRACES, split="test") if e.case == "property"]
    rows = []
    for mode in ("bm25", "hybrid"):
        for scoped in (False, True):
            samples = []
            for example in examples:
                ids = (
                    store.entity_document_ids(store.resolve_entity(example.scope.property or "").entity_id)
                    if scoped
                    else None
                )
                samples.append(
                    timed(
                        lambda e=example, ids=ids, m=mode: store.search_chunks(
                            e.question, 10, ids, m, page_weight=core.page_weight, figure_weight=core.figure_weight
                        )
                    )
                )
            rows.append({"mode": mode, "scope": "company" if scoped else "none", **percentiles(samples[3:])})
    return {"search": rows}


def _run_part(*arguments: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--part", *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"part {arguments} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filings", type=Path, help="an unpacked edgar-filings folder (default: unpack the archive)")
    parser.add_argument("--add", help="relative path of the filing added in part 2 (default: the largest 10-K)")
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument("--part", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:
        kind, *rest = args.part
        result = part_build(Path(rest[0]), Path(rest[1])) if kind == "build" else part_search(Path(rest[0]))
        print(json.dumps(result))
        return

    folder = (args.filings or unpack(ARCHIVE, SCRATCH)).resolve()
    files = filings(folder)
    added = (
        folder / args.add
        if args.add
        else max((f for f in files if f.parts[-4] == "10-K"), key=lambda f: f.stat().st_size)
    )
    load_before = os.getloadavg()
    log(f"{len(files)} filings in {folder}; {CORES} cores; load average {load_before[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="edgar-bench-") as tmp:
        whole_index = Path(tmp) / "whole"
        log("1. the whole set into an empty directory")
        whole = _run_part("build", str(folder), str(whole_index))
        rest = Path(tmp) / "rest"
        for path in files:
            if path != added:
                target = rest / path.relative_to(folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(path)
        grown_index = Path(tmp) / "grown"
        log(f"2. all but {added.relative_to(folder)}, then it added")
        without = _run_part("build", str(rest), str(grown_index))
        target = rest / added.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(added)
        grown = _run_part("build", str(rest), str(grown_index))
        log("3. search latency")
        search = _run_part("search", str(whole_index))["search"]
    load_after = os.getloadavg()
    keys = (
        "documents",
        "pages",
        "chunks",
        "skipped",
        "seconds",
        "cpu_seconds",
        "embedded",
        "reused",
        "peak_tree_rss_mb",
    )
    summary = [
        {"build": name, **{k: run.get(k) for k in keys}}
        for name, run in (("whole set, empty directory", whole), ("all but one", without), ("one filing added", grown))
    ]
    columns = ["build", *keys]
    print(table("builds (default embedder)", summary, columns))
    print(table("phases of the whole build", whole["phases"], ["phase", "start_s", "end_s", "seconds", "rate", "unit"]))
    print(
        table("phases of adding one filing", grown["phases"], ["phase", "start_s", "end_s", "seconds", "rate", "unit"])
    )
    print(table("search, top 10 (test questions)", search, ["mode", "scope", "p50_ms", "p95_ms", "mean_ms", "n"]))
    log(f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
    if args.json:
        record = {
            "benchmark": "edgar",
            "filings": len(files),
            "added": str(added.relative_to(folder)),
            "cores": CORES,
            "python": platform.python_version(),
            "load_average": {"start": load_before, "end": load_after},
            "builds": {"whole": whole, "without_one": without, "one_added": grown},
            "search": search,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
