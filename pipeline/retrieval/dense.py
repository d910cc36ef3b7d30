"""Dense retrieval on faiss: inner product over unit vectors (cosine).

Flat (exact) below `HNSW_MIN_ROWS`, HNSW above. A search restricted to a small set of rows
scores those rows' stored vectors directly, which is exact; graph indexes with an id
selector lose almost all recall on small filters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import faiss
import numpy as np
import numpy.typing as npt

from pipeline.retrieval.topk import top_k

HNSW_MIN_ROWS = 200_000
EXACT_FILTER_MAX_ROWS = 50_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 512  # recall@10 at 1M synthetic chunks: 0.98 (0.78 at 96) for ~1 ms more; benchmarks/README.md

# Rows added to an index at a time (progress is reported between blocks).
ADD_BLOCK = 32_768
DenseKind = Literal["flat", "hnsw"]


@contextmanager
def _one_openmp_thread() -> Iterator[None]:
    """faiss on one OpenMP thread in the calling thread, restored afterwards.

    One query gains nothing from a parallel region: on 2 cores a flat search of 100k
    vectors took 40 ms with 2 threads and 10 ms with 1 (benchmarks/README.md).
    """
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(previous)


class DenseIndex:
    """Vectors (memory-mapped .npy) plus a faiss index over them."""

    def __init__(self, vectors: npt.NDArray[np.float32], index: faiss.Index, kind: DenseKind) -> None:
        self.vectors = vectors
        self.index = index
        self.kind = kind

    @property
    def size(self) -> int:
        return int(self.vectors.shape[0])

    @classmethod
    def build(
        cls,
        vectors: npt.NDArray[np.float32],
        kind: DenseKind | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> DenseIndex:
        """An index over `vectors` (rows must be unit-norm float32); `progress(added, total)` after each block of
        ADD_BLOCK rows (an HNSW graph of a few hundred thousand rows takes minutes to build)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = vectors.shape[1]
        chosen: DenseKind = kind or ("hnsw" if len(vectors) >= HNSW_MIN_ROWS else "flat")
        index: faiss.Index
        if chosen == "flat":
            index = faiss.IndexFlatIP(dim)
        else:
            index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        for start in range(0, len(vectors), ADD_BLOCK):
            index.add(vectors[start : start + ADD_BLOCK])
            if progress is not None:
                progress(min(start + ADD_BLOCK, len(vectors)), len(vectors))
        return cls(vectors, index, chosen)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "vectors.npy", self.vectors, allow_pickle=False)
        faiss.write_index(self.index, str(directory / "index.faiss"))

    @classmethod
    def load(cls, directory: Path, kind: DenseKind) -> DenseIndex:
        vectors = np.load(directory / "vectors.npy", mmap_mode="r", allow_pickle=False)
        index = faiss.read_index(str(directory / "index.faiss"), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        return cls(vectors, index, kind)

    def search(
        self, query: npt.NDArray[np.float32], k: int, rows: npt.NDArray[np.int64] | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Top k rows by inner product, restricted to `rows` when given (exact for small sets)."""
        if self.size == 0 or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        if rows is not None and len(rows) <= EXACT_FILTER_MAX_ROWS:
            return top_k(self.vectors[rows] @ q[0], rows, k)
        params = None
        if self.kind == "hnsw":
            params = faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, k))  # type: ignore[attr-defined]
        if rows is not None:
            selector = faiss.IDSelectorBatch(rows)
            if params is None:
                params = faiss.SearchParameters()
            params.sel = selector
        with _one_openmp_thread():
            distances, ids = self.index.search(q, min(k, self.size), params=params)
        keep = ids[0] >= 0
        return top_k(distances[0][keep], ids[0][keep].astype(np.int64), k)
