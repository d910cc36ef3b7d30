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


def _run_part(*arguments: str) -> dict[str, Any]:
    """Run one part in a fresh interpreter; its JSON result."""
    command = [sys.executable, __file__, "--part", *arguments]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
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
    parser.add_argument("--part", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:
        kind, *rest = args.part
        if kind == "read":
            result = part_read(args.docs, rest[0], args.embed_sample, rest[1] if len(rest) > 1 else None)
        elif kind == "build":
            result = part_build(args.docs, args.manifest)
        else:
            result = part_embed(rest[0], rest[1], args.embed_sample)
        print(json.dumps(result))
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


if __name__ == "__main__":
    main()
