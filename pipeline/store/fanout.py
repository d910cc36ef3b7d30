"""An index build's reading and embedding as Ray tasks; the building process stays the one writer.

Files travel to the workers as bytes (no shared filesystem needed) and come back as pages; texts travel
as lists and come back as vectors. Each worker loads its embedder once. Results arrive in input order, so
the catalog, the vectors and the indexes are the same bytes as a single-process build of the same files.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np

from pipeline.cluster import Retries, cluster_cpus, kept, map_tasks, stream_tasks
from pipeline.errors import InputFileError
from pipeline.store.embedders import Embedder, Vectors, embedder_by_name
from pipeline.store.reading import SourceFile, read_or_error

# Files read ahead of the writer per CPU of the cluster (bounds the bytes held in the object store).
READ_AHEAD_PER_CPU = 4
# Fewer texts than this per task cost more in Ray's overhead than they gain.
MIN_TEXTS_PER_TASK = 16


class RayReader:
    """A SourceReader whose files are read by Ray tasks, in the order given; counts retried attempts."""

    def __init__(self) -> None:
        self.retries = 0

    def __call__(self, files: Sequence[tuple[Path, str]], workers: int) -> Iterator[SourceFile | InputFileError]:
        window = READ_AHEAD_PER_CPU * cluster_cpus()
        counted = Retries()
        try:
            yield from stream_tasks(_read_in_worker, None, _FileBytes(files), window=window, retries=counted)
        finally:
            self.retries += counted.count


class _FileBytes(Sequence[tuple[bytes, str, str]]):
    """(bytes, suffix, relpath) of each file, read only when its task is submitted."""

    def __init__(self, files: Sequence[tuple[Path, str]]) -> None:
        self.files = files

    def __len__(self) -> int:
        return len(self.files)

    @overload
    def __getitem__(self, index: int) -> tuple[bytes, str, str]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[bytes, str, str]]: ...
    def __getitem__(self, index: int | slice) -> tuple[bytes, str, str] | Sequence[tuple[bytes, str, str]]:
        if isinstance(index, slice):
            return _FileBytes(self.files[index])
        path, relpath = self.files[index]
        return path.read_bytes(), path.suffix, relpath


def _read_in_worker(shared: None, item: tuple[bytes, str, str], attempt: int) -> SourceFile | InputFileError:
    data, suffix, relpath = item
    with tempfile.TemporaryDirectory(prefix="scoperag-read-") as scratch:
        path = Path(scratch) / f"source{suffix}"
        path.write_bytes(data)
        return read_or_error(path, relpath)


class RayEmbedder:
    """An Embedder whose calls are split between Ray tasks, each worker holding `embedder_by_name(name)`."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim
        self.retries = 0

    def __call__(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        size = max(MIN_TEXTS_PER_TASK, -(-len(texts) // cluster_cpus()))
        parts = [list(texts[start : start + size]) for start in range(0, len(texts), size)]
        fanned = map_tasks(_embed_in_worker, self.name, parts)
        self.retries += fanned.retries
        return np.concatenate(fanned.results, axis=0)


def _embed_in_worker(name: str, texts: list[str], attempt: int) -> Vectors:
    embedder: Embedder = kept(("embedder", name), lambda: embedder_by_name(name, threads=1))
    return embedder(texts)
