"""Part 4 of the retrieval benchmark: faiss index types and filtered dense search.

Flat (exact) is the reference; HNSW is built with the project's constants (and any extra
M:efConstruction given), searched through DenseIndex and at several efSearch values;
IVF-Flat at several nprobe values. Filtered search compares scoring the allowed rows'
vectors directly (what DenseIndex does up to EXACT_FILTER_MAX_ROWS) with faiss IDSelectorBatch.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import faiss
import numpy as np
import numpy.typing as npt
from measure import WARMUP_QUERIES, K, Row, log, percentiles, recall
from synthetic import FILTER_DOCUMENTS, SEED, QuerySet, SyntheticCorpus, filter_around, filter_rows

from pipeline.retrieval import dense
from pipeline.retrieval.dense import DenseIndex
from pipeline.retrieval.topk import top_k

HNSW_EF_SWEEP = (16, 32, 64, 96, 128, 256, 384, 512, 768)
HNSW_FILTER_EF_SWEEP = (96, 512)  # efSearch tried with the id selector
IVF_NPROBE_SWEEP = (8, 16, 32, 64)


def exact_top(
    vectors: npt.NDArray[np.float32], query: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]
) -> list[int]:
    """Exact top-K rows among `rows` (the ground truth for filtered recall)."""
    return top_k(vectors[rows] @ query, rows, K)[0].tolist()


@dataclass(frozen=True)
class FilterCase:
    """One filter per query: its chunk rows and the exact top-K inside them."""

    documents: int
    rows: list[npt.NDArray[np.int64]]
    truth: list[list[int]]


def filter_cases(corpus: SyntheticCorpus, queries: QuerySet, sizes: Sequence[int]) -> list[FilterCase]:
    """Per filter size: the query's source document plus random others (the 50-doc one as in part 2)."""
    cases = []
    rng = np.random.default_rng(SEED + 1)
    sources = np.searchsorted(corpus.document_starts, queries.source_rows, side="right") - 1
    for size in sorted({min(s, corpus.documents) for s in sizes}):
        positions = (
            queries.filters
            if size == FILTER_DOCUMENTS
            else [filter_around(int(source), corpus.documents, size, rng) for source in sources]
        )
        rows = [filter_rows(corpus, p) for p in positions]
        truth = [exact_top(corpus.vectors, q, r) for q, r in zip(queries.vectors, rows, strict=True)]
        cases.append(FilterCase(size, rows, truth))
    return cases


def query_rows(
    name: str,
    build_s: float | None,
    search: Callable[[npt.NDArray[np.float32]], npt.NDArray[np.int64]],
    queries: QuerySet,
    truth: npt.NDArray[np.int64],
) -> Row:
    """Latency and recall@K of `search` (query vector -> rows) against exact `truth`."""
    for vector in queries.vectors[:WARMUP_QUERIES]:
        search(vector)
    times, recalls = [], []
    for vector, expected in zip(queries.vectors, truth, strict=True):
        start = time.perf_counter_ns()
        rows = search(vector)
        times.append((time.perf_counter_ns() - start) / 1e6)
        recalls.append(recall(rows.tolist(), expected.tolist()))
    return {"index": name, "build_s": build_s, **percentiles(times), "recall@10": float(np.mean(recalls))}


def filtered_rows(
    name: str,
    case: FilterCase,
    search: Callable[[npt.NDArray[np.float32], npt.NDArray[np.int64]], npt.NDArray[np.int64]],
    queries: QuerySet,
) -> Row:
    """Latency and recall@K of a filtered `search` (query vector, allowed rows -> rows)."""
    times, recalls = [], []
    for i, vector in enumerate(queries.vectors):
        start = time.perf_counter_ns()
        rows = search(vector, case.rows[i])
        times.append((time.perf_counter_ns() - start) / 1e6)
        recalls.append(recall(rows.tolist(), case.truth[i]))
    return {
        "filter_docs": case.documents,
        "rows_mean": float(np.mean([len(r) for r in case.rows])),
        "method": name,
        **percentiles(times),
        "recall@10": float(np.mean(recalls)),
    }


def dense_search(index: DenseIndex) -> Callable[[npt.NDArray[np.float32]], npt.NDArray[np.int64]]:
    """The project's search path: DenseIndex.search."""

    def search(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        return index.search(vector, K)[0]

    return search


def faiss_search(
    index: faiss.Index, params: faiss.SearchParameters | None = None
) -> Callable[[npt.NDArray[np.float32]], npt.NDArray[np.int64]]:
    def search(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        _, ids = index.search(vector.reshape(1, -1), K, params=params)
        return ids[0]

    return search


def selector_search(
    index: faiss.Index, params_type: type, **fields: int
) -> Callable[[npt.NDArray[np.float32], npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
    """faiss search restricted by an IDSelectorBatch built per query (its cost is included)."""

    def search(vector: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        params = params_type(**fields)
        params.sel = faiss.IDSelectorBatch(rows)
        _, ids = index.search(vector.reshape(1, -1), K, params=params)
        return ids[0][ids[0] >= 0]

    return search


def exact_rows_search(
    vectors: npt.NDArray[np.float32],
) -> Callable[[npt.NDArray[np.float32], npt.NDArray[np.int64]], npt.NDArray[np.int64]]:
    """What DenseIndex.search does for filters up to EXACT_FILTER_MAX_ROWS rows."""

    def search(vector: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        return top_k(vectors[rows] @ vector, rows, K)[0]

    return search


def build_hnsw(vectors: npt.NDArray[np.float32], m: int, ef_construction: int) -> DenseIndex:
    """DenseIndex.build(vectors, "hnsw") with M and efConstruction given instead of the constants."""
    if (m, ef_construction) == (dense.HNSW_M, dense.HNSW_EF_CONSTRUCTION):
        return DenseIndex.build(vectors, "hnsw")
    index = faiss.IndexHNSWFlat(vectors.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    index.add(vectors)
    return DenseIndex(vectors, index, "hnsw")


def faiss_kinds(
    corpus: SyntheticCorpus,
    queries: QuerySet,
    truth: npt.NDArray[np.int64],
    cases: list[FilterCase],
    hnsw_builds: Sequence[tuple[int, int]],
    ivf: bool,
) -> tuple[list[Row], list[Row]]:
    """(unfiltered rows, filtered rows) for flat, HNSW (project settings and extra builds), IVF-Flat."""
    vectors = corpus.vectors
    unfiltered: list[Row] = []
    filtered: list[Row] = []

    start = time.perf_counter()
    flat = DenseIndex.build(vectors, "flat")
    flat_s = time.perf_counter() - start
    unfiltered.append(query_rows("flat (DenseIndex)", flat_s, dense_search(flat), queries, truth))
    # DenseIndex searches on one OpenMP thread; this row uses the process setting (--threads).
    unfiltered.append(query_rows("flat (faiss, --threads)", None, faiss_search(flat.index), queries, truth))
    for case in cases:
        filtered.append(filtered_rows("exact: score allowed rows", case, exact_rows_search(vectors), queries))
        filtered.append(
            filtered_rows("flat + IDSelectorBatch", case, selector_search(flat.index, faiss.SearchParameters), queries)
        )
    del flat

    project = (dense.HNSW_M, dense.HNSW_EF_CONSTRUCTION)
    for m, ef_construction in [project, *[b for b in hnsw_builds if b != project]]:
        log(f"  HNSW M={m} efConstruction={ef_construction}")
        start = time.perf_counter()
        hnsw = build_hnsw(vectors, m, ef_construction)
        build_s = time.perf_counter() - start
        label = f"hnsw M={m} efC={ef_construction}"
        unfiltered.append(
            query_rows(
                f"{label} ef={dense.HNSW_EF_SEARCH} (DenseIndex)",
                build_s,
                dense_search(hnsw),
                queries,
                truth,
            )
        )
        for ef in HNSW_EF_SWEEP:
            params = faiss.SearchParametersHNSW(efSearch=ef)
            unfiltered.append(query_rows(f"{label} ef={ef}", None, faiss_search(hnsw.index, params), queries, truth))
        for case in cases:
            for ef in HNSW_FILTER_EF_SWEEP:
                search = selector_search(hnsw.index, faiss.SearchParametersHNSW, efSearch=ef)
                filtered.append(filtered_rows(f"{label} ef={ef} + IDSelectorBatch", case, search, queries))
        del hnsw

    if ivf:
        nlist = min(int(4 * math.sqrt(len(vectors))), len(vectors) // 39)  # faiss wants >= 39 points per list
        log(f"  IVF-Flat nlist={nlist}")
        start = time.perf_counter()
        quantizer = faiss.IndexFlatIP(vectors.shape[1])
        index = faiss.IndexIVFFlat(quantizer, vectors.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
        sample = np.random.default_rng(SEED + 2).choice(len(vectors), size=min(len(vectors), 64 * nlist), replace=False)
        index.train(vectors[np.sort(sample)])
        index.add(vectors)
        build_s = time.perf_counter() - start
        for nprobe in IVF_NPROBE_SWEEP:
            params = faiss.SearchParametersIVF(nprobe=nprobe)
            name = f"ivf-flat nlist={nlist} nprobe={nprobe}"
            unfiltered.append(
                query_rows(
                    name,
                    build_s if nprobe == IVF_NPROBE_SWEEP[0] else None,
                    faiss_search(index, params),
                    queries,
                    truth,
                )
            )
        del index, quantizer
    return unfiltered, filtered
