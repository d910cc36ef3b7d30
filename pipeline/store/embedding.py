"""Embedding a build's texts while reading goes on: cached vectors reused, the rest in length-sorted batches."""

from __future__ import annotations

import queue
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from types import TracebackType

import numpy as np

from pipeline.store.embedders import Embedder, Vectors
from pipeline.store.vector_cache import VectorCache, text_key

# (done, total) of the texts that have a vector so far
EmbedProgress = Callable[[int, int], None]
_END = None
# Texts that may wait for the embedder: past them `add` waits (reading goes no faster than embedding, so what
# waits in memory is bounded, not the rest of the corpus's chunks).
MAX_WAITING = 16_384


class IncrementalEmbedding:
    """Vectors for every text passed to `add`, in that order, from `finish`; use as a context manager.

    A background thread does the work, so the caller goes on reading and writing (onnxruntime and
    the tokenizers release the GIL). Texts whose sha256 the cache holds for this embedder are not
    embedded again, and identical texts are embedded once. Whatever has arrived is sorted by
    length (so a batch pads little) and embedded `batch` at a time; each batch is stored in the
    cache as soon as it is computed, so a build killed halfway keeps what it embedded. At most
    `max_waiting` texts wait at a time: `add` blocks until the embedder has caught up.
    """

    def __init__(
        self,
        embedder: Embedder,
        cache: VectorCache | None,
        batch: int,
        progress: EmbedProgress | None = None,
        max_waiting: int = MAX_WAITING,
    ) -> None:
        self.embedder = embedder
        self.max_waiting = max_waiting
        self._waiting = 0
        self._caught_up = threading.Condition()
        self.cache = cache
        self.batch = batch
        self.progress = progress
        self.keys: list[bytes] = []
        self.embedded = 0  # texts computed by the embedder (the rest came from the cache or a twin)
        # each distinct text's row in one growing matrix (not an array object per text)
        self._row: dict[bytes, int] = {}
        self._store = np.zeros((1024, embedder.dim), dtype=np.float32)
        self._inbox: queue.Queue[list[tuple[bytes, str]] | None] = queue.Queue()
        self._error: BaseException | None = None
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._work, name="embedding", daemon=True)
        self._worker.start()

    def __enter__(self) -> IncrementalEmbedding:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._worker.is_alive():  # left early (an error): stop after the current batch
            self._stop.set()
            self._inbox.put(_END)
            self._worker.join()

    def add(self, texts: Sequence[str]) -> None:
        """Queue `texts` for embedding; raises what the embedding thread raised, if it failed."""
        if self._error is not None:
            raise self._error
        with self._caught_up:
            while self._waiting > 0 and self._waiting + len(texts) > self.max_waiting and self._worker.is_alive():
                self._caught_up.wait(0.5)
            self._waiting += len(texts)
        if self._error is not None:
            raise self._error
        keys = [text_key(t) for t in texts]
        self.keys.extend(keys)
        self._inbox.put(list(zip(keys, texts, strict=True)))

    def finish(self) -> Vectors:
        """The (n, dim) vectors of every text added, in order, once all are embedded."""
        self._inbox.put(_END)
        self._worker.join()
        if self._error is not None:
            raise self._error
        if not self.keys:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        rows = np.fromiter((self._row[k] for k in self.keys), dtype=np.int64, count=len(self.keys))
        vectors = self._store[rows]
        self._store = np.zeros((0, self.embedder.dim), dtype=np.float32)
        return vectors

    def _work(self) -> None:
        seen = 0  # texts received in earlier rounds (every one of them has its vector)
        try:
            ended = False
            while not ended and not self._stop.is_set():
                items = [self._inbox.get()]
                while not self._inbox.empty():  # whatever else has arrived joins this round
                    items.append(self._inbox.get())
                ended = items[-1] is _END
                received = [pair for part in items if part is not None for pair in part]
                self._embed_round(received, seen)
                seen += len(received)
                with self._caught_up:
                    self._waiting -= len(received)
                    self._caught_up.notify_all()
        except BaseException as exc:  # handed to the caller by add() and finish()
            self._error = exc

    def _embed_round(self, received: list[tuple[bytes, str]], seen: int) -> None:
        pending = {k: t for k, t in received if k not in self._row}
        if self.cache is not None and pending:
            for key, vector in self.cache.get(list(pending)).items():
                self._keep(key, vector)
                del pending[key]
        waiting = Counter(k for k, _ in received if k in pending)
        total = seen + len(received)
        done = total - waiting.total()
        if self.progress:
            self.progress(done, total)
        ordered = sorted(pending.items(), key=lambda item: len(item[1]))
        for start in range(0, len(ordered), self.batch):
            if self._stop.is_set():
                return
            part = ordered[start : start + self.batch]
            vectors = self.embedder([t for _, t in part])
            if self.cache is not None:
                self.cache.put([k for k, _ in part], vectors)
            for (key, _), vector in zip(part, vectors, strict=True):
                self._keep(key, vector)
                done += waiting[key]
            self.embedded += len(part)
            if self.progress:
                self.progress(done, total)

    def _keep(self, key: bytes, vector: Vectors) -> None:
        """Store `key`'s vector in the next free row (the matrix doubles when full)."""
        row = len(self._row)
        if row == len(self._store):
            grown = np.zeros((2 * len(self._store), self._store.shape[1]), dtype=np.float32)
            grown[:row] = self._store
            self._store = grown
        self._store[row] = vector
        self._row[key] = row
