"""BM25 over pre-tokenised texts on bm25s (sparse matrices, no pickle on disk).

Scores equal rank_bm25's BM25Okapi for terms with positive idf: bm25s's "robertson"
variant leaves out the constant (k1 + 1) factor, which is restored here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import numpy.typing as npt

from pipeline.retrieval.topk import top_k
from pipeline.text import bm25_tokens

K1 = 1.5
B = 0.75


class BM25Index:
    """A BM25 index over rows 0..n-1; search may be restricted to a set of rows."""

    def __init__(self, retriever: bm25s.BM25, size: int) -> None:
        self._retriever = retriever
        self.size = size

    @classmethod
    def build(cls, texts: Sequence[str]) -> BM25Index:
        """Index `texts` (row i is texts[i])."""
        return cls.build_from_tokens([bm25_tokens(t) for t in texts])

    @classmethod
    def build_from_tokens(cls, tokens: Sequence[list[str]]) -> BM25Index:
        """Index already tokenised rows (empty rows get a placeholder so ids stay aligned)."""
        retriever = bm25s.BM25(method="robertson", k1=K1, b=B)
        retriever.index([t or ["\u2400"] for t in tokens], show_progress=False)
        return cls(retriever, len(tokens))

    def save(self, directory: Path) -> None:
        self._retriever.save(str(directory), allow_pickle=False)

    @classmethod
    def load(cls, directory: Path, size: int) -> BM25Index:
        retriever = bm25s.BM25.load(str(directory), mmap=True, allow_pickle=False)
        return cls(retriever, size)

    def rows_with(self, term: str) -> npt.NDArray[np.int64]:
        """The rows holding index term `term` (already tokenised: one of bm25_tokens), ascending."""
        column = self._retriever.vocab_dict.get(term)
        if column is None:
            return np.zeros(0, dtype=np.int64)
        pointers, rows = self._retriever.scores["indptr"], self._retriever.scores["indices"]
        return np.sort(np.asarray(rows[pointers[column] : pointers[column + 1]], dtype=np.int64))

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every row for `query` (0 where no query term occurs)."""
        vocab = self._retriever.vocab_dict
        terms = [t for t in bm25_tokens(query) if t in vocab]
        if not terms:
            return np.zeros(self.size, dtype=np.float32)
        raw = self._retriever.get_scores(terms)
        return np.asarray(raw, dtype=np.float32) * np.float32(K1 + 1)

    def search(
        self, query: str, k: int, rows: npt.NDArray[np.int64] | None = None
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Top k rows with a positive score, restricted to `rows` when given."""
        scores = self.scores(query)
        if rows is None:
            # No arange/gather over every row: at 1M rows those copies cost more than scoring.
            positive = np.flatnonzero(scores > 0).astype(np.int64, copy=False)
            return top_k(scores[positive], positive, k)
        selected = scores[rows]
        keep = selected > 0
        return top_k(selected[keep], rows[keep], k)
