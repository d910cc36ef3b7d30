"""BM25 over pre-tokenised texts on bm25s (sparse matrices, no pickle on disk).

Scores equal rank_bm25's BM25Okapi for terms with positive idf: bm25s's "robertson"
variant leaves out the constant (k1 + 1) factor, which is restored here.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import bm25s
import numpy as np
import numpy.typing as npt

from pipeline.retrieval.topk import top_k
from pipeline.text import bm25_tokens

K1 = 1.5
B = 0.75
# The term an empty row holds, so that row ids stay aligned (bm25s cannot index an empty row).
EMPTY_ROW = "\u2400"
# Rows scored at a time when a builder makes its matrix (the memory it needs beyond the matrix itself).
BUILD_ROWS = 16_384


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
        retriever.index([t or [EMPTY_ROW] for t in tokens], show_progress=False)
        return cls(retriever, len(tokens))

    def save(self, directory: Path) -> None:
        self._retriever.save(str(directory), allow_pickle=False)

    @property
    def vocabulary_size(self) -> int:
        """Distinct index terms (the empty-query placeholder included)."""
        return len(self._retriever.vocab_dict)

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


class BM25Builder:
    """Rows added one at a time, kept as (term id, count) pairs in flat arrays: a build streams its chunks'
    and pages' terms in here instead of holding every row's list of strings (what a row costs here is what
    it costs in the finished index). `build` gives the index `BM25Index.build_from_tokens` gives for the same
    rows (tests/retrieval/test_retrieval_reference.py)."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self._terms = array("I")  # term id of each (row, term) pair, row after row
        self._counts = array("I")  # how often the row holds that term
        self._pairs = array("I")  # pairs per row
        self._lengths = array("I")  # terms per row

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, tokens: Iterable[str]) -> None:
        """Append one row of index terms (row ids follow the order of `add`)."""
        vocabulary = self.vocabulary
        counts = Counter(vocabulary.setdefault(t, len(vocabulary)) for t in tokens)
        if not counts:
            counts = Counter({vocabulary.setdefault(EMPTY_ROW, len(vocabulary)): 1})
        self._terms.extend(counts.keys())
        self._counts.extend(counts.values())
        self._pairs.append(len(counts))
        self._lengths.append(counts.total())

    def build(self) -> BM25Index:
        """The BM25 index of every row added (BM25 Okapi as bm25s's "robertson" computes it, stored the way
        bm25s stores it: a CSC matrix of scores, rows by term). Built in blocks of rows, so that beyond the
        finished matrix it needs memory for one block only."""
        rows, size = len(self._lengths), len(self.vocabulary)
        terms = np.frombuffer(self._terms, dtype=np.uint32)
        counts = np.frombuffer(self._counts, dtype=np.uint32)
        pairs = np.frombuffer(self._pairs, dtype=np.uint32)
        lengths = np.frombuffer(self._lengths, dtype=np.uint32).astype(np.float32)
        ends = np.cumsum(pairs, dtype=np.int64)
        blocks = [(r, min(r + BUILD_ROWS, rows)) for r in range(0, rows, BUILD_ROWS)]
        frequencies = np.zeros(size, dtype=np.int64)
        for first, last in blocks:
            frequencies += np.bincount(terms[_span(ends, first, last)], minlength=size)
        # Robertson's idf, floored at 0 as bm25s floors it (a term in over half the rows weighs nothing)
        idf = np.log(np.maximum((rows - frequencies + 0.5) / (frequencies + 0.5), 1.0)).astype(np.float32)
        norm = (K1 * ((1 - B) + B * lengths / lengths.mean())).astype(np.float32) if rows else lengths
        indptr = np.concatenate([[0], np.cumsum(frequencies)]).astype(np.int64)
        data = np.empty(int(indptr[-1]), dtype=np.float32)
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        fill = indptr[:-1].copy()  # where each term's next row goes
        for first, last in blocks:
            span = _span(ends, first, last)
            block_terms = terms[span].astype(np.int64)
            block_rows = np.repeat(np.arange(first, last, dtype=np.int32), pairs[first:last])
            tf = counts[span].astype(np.float32)
            scores = idf[block_terms] * (tf / (norm[block_rows] + tf))
            order = np.argsort(block_terms, kind="stable")  # by term, rows ascending within each
            sorted_terms = block_terms[order]
            starts = np.searchsorted(sorted_terms, sorted_terms, side="left")
            positions = fill[sorted_terms] + (np.arange(len(order)) - starts)
            data[positions] = scores[order]
            indices[positions] = block_rows[order]
            fill += np.bincount(block_terms, minlength=size)
        retriever = bm25s.BM25(method="robertson", k1=K1, b=B)
        retriever.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": rows}
        vocabulary = dict(self.vocabulary)
        vocabulary.setdefault("", size)  # as bm25s's own index() adds it
        retriever.vocab_dict = vocabulary
        retriever.nonoccurrence_array = None
        return BM25Index(retriever, rows)


def _span(ends: npt.NDArray[np.int64], first: int, last: int) -> slice:
    """The pairs of rows first..last-1 (`ends`: where each row's pairs end)."""
    return slice(int(ends[first - 1]) if first else 0, int(ends[last - 1]) if last else 0)
