"""Index build throughput on a real corpus: the old path (pypdf, one thread) against the new one, in one run.

    .venv/bin/python benchmarks/build.py                                  # ../shared/data/sec-10q/docs
    .venv/bin/python benchmarks/build.py --embed-sample 384 --json benchmarks/results/build-sec-10q.json

Each path runs in its own fresh process, one after the other (imports and model loading are not
timed). Memory: `peak_rss_mb` is that process's own peak (ru_maxrss); `peak_tree_rss_mb` the peak
of its RSS plus its reading processes', sampled every 100 ms from /proc.

- reading: every file of the corpus to pages. old: pypdf in one process (what `build_index`
  did); pdfium-1: the new reader in one process; new: the new reader in one process per core.
- embedding, on the first `--embed-sample` chunks (document order): old: MiniLM int8, one thread,
  batches of 64 (32 per onnxruntime run) in document order (what `build_index` did); sessions:
  what `scoperag index --embedder minilm` does, `IncrementalEmbedding` (length-sorted batches)
  over an `EmbedderPool` of one single-thread session per core; intra-op: the same with one
  session using every core as intra-op threads; static: the static embedder on every chunk.
- memory: peak RSS of the old path (pypdf reading + chunking + embedding the sample) against
  the new path (parallel reading + chunking + embedding the same sample with sessions).
- builds with the default (static) embedder, `build_index` end to end: the whole corpus into an
  empty index, then all but the last file into a new index and the last one added to it.

The machine may be shared: compare ratios within one run; the load average is printed.

Growth (`--growth`): builds of a synthetic corpus of annual-report shape (benchmarks/annual_reports.py) at
1x, 2x, 4x and 8x the EDGAR set's 8,415 pages (`--scales`), each a whole `build_index` with the default
embedder into an empty directory, in a fresh process: its time, CPU seconds (process and reading processes),
and per phase (read, embed, each index step) its time and the peak RSS of the process and its reading
processes while it ran (sampled every 100 ms). Memory at 8x against 1x says whether the build streams.
`--baseline DIR` runs the same builds with the `pipeline` package of another checkout (e.g. the commit
before a change: `git worktree add /tmp/old COMMIT`) in the same run, old against new:

    .venv/bin/python benchmarks/build.py --growth --scales 1 8 --json benchmarks/results/build-growth.json
    .venv/bin/python benchmarks/build.py --growth --scales 1 --baseline /tmp/old
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from measure import TreeRss, log, peak_rss_mb, table

ROOT = Path(__file__).resolve().parents[1]
# ../shared beside the checkout (or beside the folder of worktrees that holds it)
DEFAULT_DOCS = next(
    (d for d in (r / "shared" / "data" / "sec-10q" / "docs" for r in ROOT.parents[:2]) if d.is_dir()),
    ROOT.parent / "shared" / "data" / "sec-10q" / "docs",
)
CORES = len(os.sched_getaffinity(0))


def _files(docs: Path) -> list[tuple[Path, str]]:
    return [(p, p.relative_to(docs).as_posix()) for p in sorted(docs.rglob("*.pdf"))]


def _chunks(pages_by_file: list[tuple[str, ...]]) -> list[str]:
    from pipeline.store.chunking import chunk_pages

    return [c.text for pages in pages_by_file for c in chunk_pages(pages)]


def _read_old(files: list[tuple[Path, str]]) -> list[tuple[str, ...]]:
    from pipeline.store.pdf import _read_with_pypdf
    from pipeline.text import strip_hidden

    return [tuple(strip_hidden(page)[0] for page in _read_with_pypdf(path).pages) for path, _ in files]


def _read_new(files: list[tuple[Path, str]], workers: int) -> list[tuple[str, ...]]:
    from pipeline.errors import InputFileError
    from pipeline.store.reading import read_sources

    return [s.pages for s in read_sources(files, workers) if not isinstance(s, InputFileError)]


def _timed(call: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def part_read(docs: Path, path: str, sample: int, chunks_out: str | None) -> dict[str, Any]:
    """One reading path, then (old and new paths) embedding the first `sample` chunks the old or new way."""
    files = _files(docs)
    with TreeRss() as tree:
        result = _read_and_embed(files, path, sample, chunks_out)
    result["peak_rss_mb"] = peak_rss_mb()
    result["peak_tree_rss_mb"] = max(tree.peak_mb, result["peak_rss_mb"])
    return result


def _read_and_embed(files: list[tuple[Path, str]], path: str, sample: int, chunks_out: str | None) -> dict[str, Any]:
    if path == "old":
        pages, seconds = _timed(lambda: _read_old(files))
    else:
        pages, seconds = _timed(lambda: _read_new(files, CORES if path == "new" else 1))
    chunks, chunk_seconds = _timed(lambda: _chunks(pages))
    if chunks_out:
        Path(chunks_out).write_text(json.dumps(chunks))
    result: dict[str, Any] = {
        "path": path,
        "files": len(files),
        "pages": sum(len(p) for p in pages),
        "characters": sum(len(page) for p in pages for page in p),
        "chunks": len(chunks),
        "read_s": seconds,
        "pages_per_s": sum(len(p) for p in pages) / seconds,
        "chunk_s": chunk_seconds,
    }
    if sample and path in ("old", "new"):
        result.update(_embed_minilm(chunks[:sample], "old" if path == "old" else "sessions"))
    return result


def _embed_minilm(texts: list[str], mode: str) -> dict[str, Any]:
    from pipeline.store.embedder_pool import EmbedderPool
    from pipeline.store.embedders import Embedder, MiniLMEmbedder
    from pipeline.store.embedding import IncrementalEmbedding

    with contextlib.ExitStack() as resources:
        embedder: Embedder
        if mode == "old":
            embedder = MiniLMEmbedder(threads=1, batch_size=32)  # the settings build_index used
        elif mode == "sessions":
            embedder = resources.enter_context(EmbedderPool(MiniLMEmbedder.name, MiniLMEmbedder.dim, CORES))
        else:
            embedder = MiniLMEmbedder(threads=CORES)
        embedder(texts[:2])  # warm-up, as every mode gets

        def run() -> None:
            if mode == "old":
                for start in range(0, len(texts), 64):
                    embedder(texts[start : start + 64])
                return
            with IncrementalEmbedding(embedder, None, batch=64) as embedding:
                embedding.add(texts)
                embedding.finish()

        _, seconds = _timed(run)
    return {"embed_mode": mode, "embedded": len(texts), "embed_s": seconds, "chunks_per_s": len(texts) / seconds}


def part_embed(chunks_file: str, mode: str, sample: int) -> dict[str, Any]:
    """Embedding throughput of `mode` ("intra-op" or "static") on the saved chunks."""
    texts: list[str] = json.loads(Path(chunks_file).read_text())
    if mode != "static":
        return {**_embed_minilm(texts[:sample], mode), "peak_rss_mb": peak_rss_mb()}
    from pipeline.store.embedders import StaticEmbedder

    embedder = StaticEmbedder()
    embedder(texts[:2])
    _, seconds = _timed(lambda: embedder(texts))
    return {
        "embed_mode": mode,
        "embedded": len(texts),
        "embed_s": seconds,
        "chunks_per_s": len(texts) / seconds,
        "peak_rss_mb": peak_rss_mb(),
    }


def part_build(docs: Path, manifest: Path) -> dict[str, Any]:
    """`build_index` with the default embedder: from nothing, then one file added to the rest."""
    from pipeline.store.build import build_index
    from pipeline.store.embedders import StaticEmbedder

    embedder = StaticEmbedder()
    files = _files(docs)
    with tempfile.TemporaryDirectory() as tmp, TreeRss() as tree:
        report, scratch_s = _timed(lambda: build_index(docs, Path(tmp) / "all", embedder, manifest))
        rest = Path(tmp) / "rest"
        rest.mkdir()
        for path, rel in files[:-1]:
            (rest / rel).symlink_to(path)
        build_index(rest, Path(tmp) / "grown", embedder, manifest)
        (rest / files[-1][1]).symlink_to(files[-1][0])
        added, add_s = _timed(lambda: build_index(rest, Path(tmp) / "grown", embedder, manifest))
    return {
        "embedder": embedder.name,
        "chunks": report.chunks,
        "from_scratch_s": scratch_s,
        "added_file": files[-1][1],
        "add_one_s": add_s,
        "add_one_embedded": added.embedded,
        "peak_rss_mb": peak_rss_mb(),
        "peak_tree_rss_mb": max(tree.peak_mb, peak_rss_mb()),
    }


def part_growth(docs: Path, out: Path) -> dict[str, Any]:
    """One whole `build_index` of `docs` into `out` (default embedder): time, CPU, and each phase's time and peak
    RSS (this process and its reading processes)."""
    import resource

    import pipeline
    from pipeline.store.build import build_index
    from pipeline.store.embedders import StaticEmbedder

    embedder = StaticEmbedder()
    events: list[tuple[float, str, str]] = []
    start = time.perf_counter()

    def progress(
        stage: str, done: int, total: int | None, note: str = "", rate_of: tuple[int, str] | None = None
    ) -> None:
        events.append((time.perf_counter() - start, stage, note if stage == "index" else ""))

    before = resource.getrusage(resource.RUSAGE_SELF)
    with TreeRss(history=True) as tree:
        report = build_index(docs, out, embedder, progress=progress)
    seconds = time.perf_counter() - start
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    samples = [(t - start, mb) for t, mb in tree.samples]
    return {
        "code_root": str(Path(pipeline.__file__).resolve().parents[1]),
        "pages": report.pages,
        "chunks": report.chunks,
        "documents": report.documents,
        "seconds": seconds,
        "cpu_seconds": own.ru_utime
        + own.ru_stime
        + children.ru_utime
        + children.ru_stime
        - before.ru_utime
        - before.ru_stime,
        "peak_rss_mb": peak_rss_mb(),
        "peak_tree_rss_mb": max(tree.peak_mb, peak_rss_mb()),
        "phases": growth_phases(events, samples, seconds),
    }


def growth_phases(
    events: list[tuple[float, str, str]], samples: list[tuple[float, float]], end: float
) -> list[dict[str, Any]]:
    """Each phase's start, length and peak sampled RSS: reading (first to last "read" event), embedding what is
    left once reading ended, whatever runs before the first index step, then each index step to the next."""
    read = [t for t, stage, _ in events if stage == "read"] or [0.0]
    embed = [t for t, stage, _ in events if stage == "embed"]
    steps = [(t, note) for t, stage, note in events if stage == "index"]
    spans = [("read", read[0], read[-1])]
    if embed and embed[-1] > read[-1]:
        spans.append(("embed (after reading)", read[-1], embed[-1]))
    previous = max(read[-1], *(embed[-1:] or [0.0]))
    if steps and steps[0][0] > previous:
        spans.append(("before the index steps", previous, steps[0][0]))
    named = [(t, note.split(" (")[0]) for t, note in steps]  # "dense index of N chunks (M added)" is one step
    starts = [(t, name) for i, (t, name) in enumerate(named) if i == 0 or named[i - 1][1] != name]
    for i, (t, name) in enumerate(starts):
        if name == "published":
            break
        spans.append((f"index: {name}", t, starts[i + 1][0] if i + 1 < len(starts) else end))
    return [
        {
            "phase": name,
            "start_s": start,
            "seconds": finish - start,
            "peak_tree_rss_mb": max((mb for at, mb in samples if start <= at <= finish), default=float("nan")),
        }
        for name, start, finish in spans
    ]


def growth(scales: list[float], baseline: Path | None, keep: Path) -> list[dict[str, Any]]:
    """Builds of the synthetic corpus at each scale (corpora written once under `keep`), new code and, with
    `baseline`, old code in the same run."""
    from annual_reports import EDGAR_PAGES, write_corpus

    rows = []
    for scale in scales:
        docs = keep / f"reports-{scale:g}x"
        if not docs.is_dir():
            log(f"writing the {scale:g}x corpus ({round(EDGAR_PAGES * scale):,} pages) to {docs}")
            write_corpus(docs, round(EDGAR_PAGES * scale))
        for code in ([baseline] if baseline else []) + [None]:
            label = "old" if code else "new"
            log(f"{scale:g}x: build with the {label} code")
            with tempfile.TemporaryDirectory(prefix="growth-") as tmp:
                result = _run_part("growth", str(docs), str(Path(tmp) / "index"), code=code)
            rows.append({"scale": scale, "code": label, **result})
            log(
                f"{scale:g}x {label}: {result['pages']:,} pages, {result['seconds']:.0f} s, "
                f"peak {result['peak_tree_rss_mb']:.0f} MB"
            )
    return rows


def _run_part(*arguments: str, code: Path | None = None) -> dict[str, Any]:
    """Run one part in a fresh interpreter (importing `pipeline` from `code` when given); its JSON result."""
    command = [sys.executable, __file__, "--part", *arguments]
    env = {**os.environ, "PYTHONPATH": str(code)} if code else None
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"part {arguments} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="directory of PDFs (default: %(default)s)")
    parser.add_argument("--embed-sample", type=int, default=256, help="chunks embedded by each MiniLM mode")
    parser.add_argument(
        "--manifest", type=Path, default=ROOT / "datasets" / "sec-10q" / "corpus.toml", help="corpus manifest"
    )
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument("--growth", action="store_true", help="builds of a synthetic corpus at several sizes")
    parser.add_argument("--scales", type=float, nargs="+", default=[1, 2, 4, 8], help="sizes, times the EDGAR set")
    parser.add_argument("--baseline", type=Path, help="a checkout whose pipeline package builds too (old code)")
    parser.add_argument(
        "--corpora", type=Path, default=ROOT / ".scoperag" / "growth", help="where the synthetic corpora are kept"
    )
    parser.add_argument("--part", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:
        kind, *rest = args.part
        if kind == "growth":
            result = part_growth(Path(rest[0]), Path(rest[1]))
        elif kind == "read":
            result = part_read(args.docs, rest[0], args.embed_sample, rest[1] if len(rest) > 1 else None)
        elif kind == "build":
            result = part_build(args.docs, args.manifest)
        else:
            result = part_embed(rest[0], rest[1], args.embed_sample)
        print(json.dumps(result))
        return

    if args.growth:
        report_growth(args)
        return
    if not _files(args.docs):
        parser.error(f"no PDF under {args.docs}; pass --docs DIR")
    load_before = os.getloadavg()
    log(f"{len(_files(args.docs))} PDFs in {args.docs}; {CORES} cores; load average {load_before[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        chunks_file = str(Path(tmp) / "chunks.json")
        reads = []
        for path in ("new", "pdfium-1", "old"):
            log(f"reading: {path}")
            extra = (chunks_file,) if path == "new" else ()
            reads.append(_run_part("read", path, *extra))
        embeds = [
            {"embed_mode": r["embed_mode"], **{k: r[k] for k in ("embedded", "embed_s", "chunks_per_s")}}
            for r in reads
            if "embed_mode" in r
        ]
        for mode in ("intra-op", "static"):
            log(f"embedding: {mode}")
            embeds.append(_run_part("embed", chunks_file, mode))
    log("builds with the default embedder")
    build = _run_part("build", "default")
    by_read = {r["path"]: r for r in reads}
    by_embed = {e["embed_mode"]: e for e in embeds}
    old, new = by_read["old"], by_read["new"]
    for r in reads:
        r["speedup"] = r["pages_per_s"] / old["pages_per_s"]
    for e in embeds:
        e["speedup"] = e["chunks_per_s"] / by_embed["old"]["chunks_per_s"]
    memory = [
        {"path": path, **{k: row[k] for k in ("peak_rss_mb", "peak_tree_rss_mb")}}
        for path, row in (("old", old), ("new", new), ("new, default build", build))
    ]
    print(table("reading", reads, ["path", "files", "pages", "characters", "read_s", "pages_per_s", "speedup"]))
    print(
        table(
            f"embedding (MiniLM: first {args.embed_sample} chunks)",
            embeds,
            ["embed_mode", "embedded", "embed_s", "chunks_per_s", "speedup"],
        )
    )
    print(
        table(
            "peak memory: read + chunk + embed the sample (old, new); build_index (default)",
            memory,
            ["path", "peak_rss_mb", "peak_tree_rss_mb"],
        )
    )
    columns = ["embedder", "chunks", "from_scratch_s", "add_one_s", "add_one_embedded"]
    print(table("builds with the default embedder", [build], columns))
    load_after = os.getloadavg()
    log(f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
    if args.json:
        record = {
            "benchmark": "build",
            "docs": str(args.docs),
            "cores": CORES,
            "python": platform.python_version(),
            "load_average": {"start": load_before, "end": load_after},
            "embed_sample": args.embed_sample,
            "reading": reads,
            "embedding": embeds,
            "memory": memory,
            "builds": build,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


def report_growth(args: argparse.Namespace) -> None:
    """Run the growth builds, print their tables, write the JSON."""
    load_before = os.getloadavg()
    log(f"growth builds at {args.scales}; {CORES} cores; load average {load_before[0]:.2f}")
    rows = growth(args.scales, args.baseline, args.corpora)
    first = {r["code"]: r for r in rows if r["scale"] == min(args.scales)}
    for row in rows:
        row["rss_vs_smallest"] = row["peak_tree_rss_mb"] / first[row["code"]]["peak_tree_rss_mb"]
    columns = ["scale", "code", "pages", "chunks", "seconds", "cpu_seconds", "peak_tree_rss_mb", "rss_vs_smallest"]
    print(table("whole builds (default embedder, synthetic annual reports)", rows, columns))
    for row in rows:
        title = f"phases at {row['scale']:g}x ({row['code']} code)"
        print(table(title, row["phases"], ["phase", "start_s", "seconds", "peak_tree_rss_mb"]))
    load_after = os.getloadavg()
    log(f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
    if args.json:
        record = {
            "benchmark": "build-growth",
            "cores": CORES,
            "python": platform.python_version(),
            "load_average": {"start": load_before, "end": load_after},
            "builds": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
