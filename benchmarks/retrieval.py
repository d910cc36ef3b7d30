"""Retrieval speed on synthetic corpora: build, Store.search_chunks, BM25 engines, faiss index types.

    python benchmarks/retrieval.py --sizes 10000 100000 [1000000] --queries 200 --threads 1 --json PATH

Embedding is excluded everywhere: chunk vectors are precomputed and the store is opened with
an embedder that returns each query's precomputed vector. Every size runs the four parts in
one process, one after another, so their numbers can be compared side by side; see
benchmarks/README.md for what each column means.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt
import rank_bm25
from faiss_kinds import exact_top, faiss_kinds, filter_cases
from measure import (
    WARMUP_QUERIES,
    K,
    Row,
    directory_mb,
    log,
    peak_rss_mb,
    percentiles,
    recall,
    reset_peak_rss,
    rss_mb,
    table,
    timed,
)
from synthetic import (
    FILTER_DOCUMENTS,
    SEED,
    CorpusShape,
    QuerySet,
    SyntheticCorpus,
    filter_rows,
    make_corpus,
    make_queries,
)
from threadpoolctl import threadpool_limits

from pipeline.retrieval import dense
from pipeline.retrieval.bm25 import K1, B
from pipeline.store import Store, open_store
from pipeline.store.build import finish_generation
from pipeline.store.catalog import CatalogWriter, document_id, entity_id
from pipeline.store.generations import new_scratch_dir
from pipeline.store.index import document_search_text
from pipeline.text import bm25_tokens
from pipeline.types import Chunk, Document, Entity, SearchMode

ENTITIES = 100
EMBEDDER_NAME = "synthetic-384"
# rank-bm25 is pure Python (~3 s per query at 1M chunks): it gets this many row-queries of work.
RANK_BM25_ROW_BUDGET = 2_000_000
RANK_BM25_MIN_QUERIES = 5


class PrecomputedEmbedder:
    """An embedder that returns the precomputed vector of each known query text."""

    def __init__(self, name: str, dim: int, queries: QuerySet) -> None:
        self.name = name
        self.dim = dim
        self._vectors = dict(zip(queries.texts, queries.vectors, strict=True))

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([self._vectors[t] for t in texts])


# -- 1. build ------------------------------------------------------------------------------------


def write_catalog(corpus: SyntheticCorpus, scratch: Path) -> list[str]:
    """Write catalog.sqlite as build_index does; returns the document search texts."""
    writer = CatalogWriter(scratch / "catalog.sqlite")
    entities = [Entity(entity_id("bench", f"e{i}"), f"e{i}", f"Entity {i}") for i in range(ENTITIES)]
    for entity in entities:
        writer.add_entity(entity, "entity")
    document_texts = []
    for position in range(corpus.documents):
        start, end = int(corpus.document_starts[position]), int(corpus.document_starts[position + 1])
        relpath = f"docs/doc-{position:07d}.txt"
        document = Document(
            document_id=document_id("bench", relpath),
            filename=Path(relpath).name,
            relpath=relpath,
            title=f"Document {position}",
            summary=" ".join(corpus.texts[start].split()[:30]),
            doc_type="document",
            page_count=math.ceil((end - start) / 4),
            entity_ids=(entities[position % ENTITIES].entity_id,),
        )
        sha = hashlib.sha256(relpath.encode()).hexdigest()
        writer.add_document(document, "extractive", sha, start, position)
        writer.add_chunks(
            Chunk(row, document.document_id, 1 + (row - start) // 4, row - start, corpus.texts[row])
            for row in range(start, end)
        )
        document_texts.append(document_search_text(document.filename, document.title, document.summary))
    writer.set_meta("corpus", "bench")
    writer.set_meta("entity_kind", "entity")
    writer.close()
    return document_texts


def build(corpus: SyntheticCorpus, index_dir: Path) -> Row:
    """Time and peak memory of a full generation: catalog, BM25, dense, publish."""
    reset = reset_peak_rss()
    before = rss_mb()
    start = time.perf_counter()
    scratch = new_scratch_dir(index_dir)
    document_texts = write_catalog(corpus, scratch)
    catalog_s = time.perf_counter() - start
    manifest = finish_generation(
        index_dir,
        scratch,
        corpus.texts,
        document_texts,
        corpus.vectors,
        corpus.document_vectors,
        {
            "corpus": "bench",
            "embedder": EMBEDDER_NAME,
            "embedding_dim": corpus.vectors.shape[1],
            "counts": {"documents": corpus.documents, "chunks": len(corpus.texts), "skipped": 0},
            "settings": {"chunk_words": 100, "chunk_overlap": 0},
        },
    )
    total_s = time.perf_counter() - start
    peak = peak_rss_mb()
    return {
        "chunks": len(corpus.texts),
        "documents": corpus.documents,
        "dense_kind": manifest.dense_kind,
        "total_s": total_s,
        "catalog_s": catalog_s,
        "indexes_publish_s": total_s - catalog_s,
        "rss_before_mb": before,
        "peak_rss_mb": peak,
        "peak_delta_mb": peak - before if reset else float("nan"),
        "disk_mb": directory_mb(index_dir),
    }


# -- 2. Store.search_chunks -------------------------------------------------------------------


def store_latency(store: Store, corpus: SyntheticCorpus, queries: QuerySet, truth: npt.NDArray[np.int64]) -> list[Row]:
    """p50/p95 of search_chunks per (mode, filter), queries round-robin over the configurations."""
    order = store.catalog.document_order
    scopes = [[order[p] for p in positions.tolist()] for positions in queries.filters]
    configs: list[tuple[SearchMode, bool]] = [(m, f) for m in ("bm25", "dense", "hybrid") for f in (False, True)]
    samples: dict[tuple[str, bool], list[float]] = {c: [] for c in configs}
    recalls: dict[tuple[str, bool], list[float]] = {c: [] for c in configs}
    for i, text in enumerate(queries.texts):
        for mode, filtered in configs:
            scope = scopes[i] if filtered else None
            start = time.perf_counter_ns()
            hits = store.search_chunks(text, k=K, document_ids=scope, mode=mode)
            elapsed = (time.perf_counter_ns() - start) / 1e6
            if i < WARMUP_QUERIES:
                continue
            samples[(mode, filtered)].append(elapsed)
            if mode == "dense":
                rows = [h.chunk.row for h in hits]
                if filtered:
                    expected = exact_top(corpus.vectors, queries.vectors[i], filter_rows(corpus, queries.filters[i]))
                else:
                    expected = truth[i].tolist()
                recalls[(mode, filtered)].append(recall(rows, expected))
    return [
        {
            "mode": mode,
            "filter": f"{FILTER_DOCUMENTS} docs" if filtered else "none",
            **percentiles(samples[(mode, filtered)]),
            "recall@10": float(np.mean(recalls[(mode, filtered)])) if recalls[(mode, filtered)] else None,
        }
        for mode, filtered in configs
    ]


# -- 3. BM25 engine vs rank-bm25 ---------------------------------------------------------------


def bm25_versus_rank_bm25(store: Store, corpus: SyntheticCorpus, queries: QuerySet) -> Row:
    """Per-query full scoring: BM25Index.scores (bm25s, as loaded by the store) vs BM25Okapi."""
    ours = [timed(partial(store.chunk_bm25.scores, text)) for text in queries.texts]
    shared: dict[str, str] = {}  # one object per distinct token, or 1M chunks need ~6 GB of strings
    start = time.perf_counter()
    tokens = [[shared.setdefault(t, t) for t in bm25_tokens(text)] for text in corpus.texts]
    okapi = rank_bm25.BM25Okapi(tokens, k1=K1, b=B)
    rank_build_s = time.perf_counter() - start
    del tokens

    def reference_scores(text: str) -> object:
        return okapi.get_scores(bm25_tokens(text))  # tokenising is inside BM25Index.scores too

    count = min(len(queries.texts), max(RANK_BM25_MIN_QUERIES, RANK_BM25_ROW_BUDGET // len(corpus.texts)))
    theirs = [timed(partial(reference_scores, text)) for text in queries.texts[:count]]
    mine, reference = percentiles(ours), percentiles(theirs)
    return {
        "queries_ours": mine["n"],
        "ours_p50_ms": mine["p50_ms"],
        "ours_p95_ms": mine["p95_ms"],
        "queries_rank_bm25": reference["n"],
        "rank_bm25_p50_ms": reference["p50_ms"],
        "rank_bm25_p95_ms": reference["p95_ms"],
        "speedup_p50": reference["p50_ms"] / mine["p50_ms"],
        "rank_bm25_build_s": rank_build_s,
    }


def targets(results: dict[int, Row]) -> list[Row]:
    """The project's targets against whatever sizes were measured."""

    def latency(size: int, mode: str, flt: str) -> float | None:
        rows = results.get(size, {}).get("store_latency", [])
        return next((r["p50_ms"] for r in rows if r["mode"] == mode and r["filter"] == flt), None)

    def dense_recall(size: int) -> float | None:
        rows = results.get(size, {}).get("store_latency", [])
        return next((r["recall@10"] for r in rows if r["mode"] == "dense" and r["filter"] == "none"), None)

    build = results.get(100_000, {}).get("build", {}).get("total_s")
    filtered = f"{FILTER_DOCUMENTS} docs"
    checks: list[tuple[str, float | None, float, bool]] = [
        ("hybrid p50 ms, 100k, unfiltered", latency(100_000, "hybrid", "none"), 10.0, True),
        ("hybrid p50 ms, 100k, filtered", latency(100_000, "hybrid", filtered), 10.0, True),
        ("hybrid p50 ms, 1M, unfiltered", latency(1_000_000, "hybrid", "none"), 50.0, True),
        ("hybrid p50 ms, 1M, filtered", latency(1_000_000, "hybrid", filtered), 50.0, True),
        ("store dense recall@10 vs flat, 1M", dense_recall(1_000_000), 0.95, False),
        ("build s, 100k (embedding excluded)", build, 60.0, True),
    ]
    out = []
    for name, value, limit, at_most in checks:
        met = None if value is None else (value <= limit if at_most else value >= limit)
        bound = f"<= {limit:g}" if at_most else f">= {limit:g}"
        out.append(
            {
                "target": name,
                "bound": bound,
                "measured": value,
                "status": "not run" if met is None else ("met" if met else "MISSED"),
            }
        )
    return out


# -- driver --------------------------------------------------------------------------------------


def run_size(size: int, args: argparse.Namespace, scratch_root: Path) -> Row:
    log(f"size {size}: generating corpus")
    start = time.perf_counter()
    corpus = make_corpus(CorpusShape(chunks=size), SEED)
    queries = make_queries(corpus, args.queries + WARMUP_QUERIES, FILTER_DOCUMENTS, SEED + size)
    generate_s = time.perf_counter() - start
    log(f"size {size}: exact ground truth")
    exact = faiss.IndexFlatIP(corpus.vectors.shape[1])
    exact.add(corpus.vectors)
    truth = exact.search(queries.vectors, K)[1].astype(np.int64)
    del exact

    measured = QuerySet(
        queries.texts[WARMUP_QUERIES:],
        queries.vectors[WARMUP_QUERIES:],
        queries.source_rows[WARMUP_QUERIES:],
        queries.filters[WARMUP_QUERIES:],
    )
    index_dir = Path(tempfile.mkdtemp(prefix=f"index-{size}-", dir=scratch_root))
    try:
        log(f"size {size}: 1. build")
        built = build(corpus, index_dir)
        built["generate_s"] = generate_s
        start = time.perf_counter()
        store = open_store(index_dir, PrecomputedEmbedder(EMBEDDER_NAME, corpus.vectors.shape[1], queries))
        built["open_s"] = time.perf_counter() - start
        log(f"size {size}: 2. Store.search_chunks")
        latency = store_latency(store, corpus, queries, truth)
        log(f"size {size}: 3. BM25 vs rank-bm25")
        bm25 = bm25_versus_rank_bm25(store, corpus, measured)
        del store
    finally:
        shutil.rmtree(index_dir, ignore_errors=True)
    log(f"size {size}: 4. faiss index types")
    cases = filter_cases(corpus, measured, args.filter_docs)
    kinds, kinds_filtered = faiss_kinds(corpus, measured, truth[WARMUP_QUERIES:], cases, args.hnsw_builds, args.ivf)
    return {
        "size": size,
        "build": built,
        "store_latency": latency,
        "bm25": bm25,
        "faiss": kinds,
        "faiss_filtered": kinds_filtered,
    }


def print_results(results: dict[int, Row]) -> None:
    sizes = sorted(results)
    print(
        table(
            "1. Build (catalog + BM25 + dense + publish; embedding excluded)",
            [results[s]["build"] for s in sizes],
            [
                "chunks",
                "documents",
                "dense_kind",
                "total_s",
                "catalog_s",
                "indexes_publish_s",
                "peak_delta_mb",
                "peak_rss_mb",
                "disk_mb",
                "open_s",
            ],
        )
    )
    print(
        table(
            f"2. Store.search_chunks top-{K} (query embedding excluded)",
            [{"chunks": s, **r} for s in sizes for r in results[s]["store_latency"]],
            ["chunks", "mode", "filter", "p50_ms", "p95_ms", "mean_ms", "n", "recall@10"],
        )
    )
    print(
        table(
            "3. BM25 full scoring per query: BM25Index.scores (bm25s) vs rank_bm25.BM25Okapi.get_scores",
            [{"chunks": s, **results[s]["bm25"]} for s in sizes],
            [
                "chunks",
                "queries_ours",
                "ours_p50_ms",
                "ours_p95_ms",
                "queries_rank_bm25",
                "rank_bm25_p50_ms",
                "rank_bm25_p95_ms",
                "speedup_p50",
            ],
        )
    )
    print(
        table(
            f"4a. faiss index types, unfiltered top-{K}, recall against flat",
            [{"chunks": s, **r} for s in sizes for r in results[s]["faiss"]],
            ["chunks", "index", "build_s", "p50_ms", "p95_ms", "recall@10"],
        )
    )
    print(
        table(
            f"4b. Filtered dense top-{K}, recall against exact search inside the filter",
            [{"chunks": s, **r} for s in sizes for r in results[s]["faiss_filtered"]],
            ["chunks", "filter_docs", "rows_mean", "method", "p50_ms", "p95_ms", "recall@10"],
        )
    )
    print(table("Targets", targets(results), ["target", "bound", "measured", "status"]))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="chunks per corpus")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per measurement")
    parser.add_argument(
        "--threads", type=int, default=1, help="BLAS and faiss OpenMP threads; 0 keeps the library defaults"
    )
    parser.add_argument("--json", type=Path, help="write all results here")
    parser.add_argument(
        "--filter-docs",
        type=int,
        nargs="+",
        default=[FILTER_DOCUMENTS],
        help="filter sizes (documents) for table 4b",
    )
    parser.add_argument(
        "--hnsw-builds",
        type=_m_ef,
        nargs="*",
        default=[],
        help="extra HNSW builds for table 4a as M:efConstruction, e.g. 16:40",
    )
    parser.add_argument("--no-ivf", dest="ivf", action="store_false", help="skip IVF-Flat in table 4a")
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()), help="where indexes are built")
    return parser.parse_args(argv)


def _m_ef(value: str) -> tuple[int, int]:
    m, ef = value.split(":")
    return int(m), int(ef)


def thread_limits(threads: int) -> contextlib.AbstractContextManager[object]:
    """BLAS and faiss OpenMP limited to `threads` threads; 0 keeps the libraries' defaults."""
    if threads <= 0:
        return contextlib.nullcontext()
    faiss.omp_set_num_threads(threads)
    return threadpool_limits(limits=threads)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    cpus = len(os.sched_getaffinity(0))
    meta = {
        "threads": args.threads if args.threads > 0 else f"library default ({faiss.omp_get_max_threads()})",
        "queries": args.queries,
        "k": K,
        "seed": SEED,
        "cpus": cpus,
        "load_average_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "faiss": faiss.__version__,
        "dense_constants": {
            name: getattr(dense, name)
            for name in ("HNSW_MIN_ROWS", "EXACT_FILTER_MAX_ROWS", "HNSW_M", "HNSW_EF_CONSTRUCTION", "HNSW_EF_SEARCH")
        },
        "peak_rss_method": "VmHWM reset via /proc/self/clear_refs before the build, ru_maxrss after",
    }
    log(f"threads={meta['threads']} sizes={args.sizes} queries={args.queries}")
    results: dict[int, Row] = {}
    with thread_limits(args.threads):
        for size in args.sizes:
            results[size] = run_size(size, args, args.tmp)
    meta["load_average_at_end"] = os.getloadavg()
    print(
        f"threads={meta['threads']} (BLAS + faiss OpenMP), cpus={cpus}, load average "
        f"{meta['load_average_at_start'][0]:.1f} -> {meta['load_average_at_end'][0]:.1f}, queries={args.queries}, "
        f"k={K}\ndense constants {meta['dense_constants']}\n"
    )
    print_results(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"meta": meta, "results": [results[s] for s in sorted(results)], "targets": targets(results)}
        args.json.write_text(json.dumps(payload, indent=1) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
