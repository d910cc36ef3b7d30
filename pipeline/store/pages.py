"""The page index: BM25 over each page's words, so a question finds the page that answers it even
when its terms are spread over several chunks of that page (a table's row labels, its heading)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pipeline.errors import IndexCorruptError
from pipeline.retrieval.bm25 import BM25Builder, BM25Index
from pipeline.retrieval.topk import top_k
from pipeline.store.chunking import PageChunk
from pipeline.text import bm25_tokens
from pipeline.types import Chunk

PAGES_BM25 = "pages_bm25"
PAGES_FIRST_ROWS = "pages_first_rows.npy"
PAGES_FIGURES = "pages_figures.npy"


def figure_share(text: str) -> float:
    """The share of `text`'s index terms that are figures (amounts, dates, numbers): near 1 on a
    financial statement or a schedule, near 0 on prose."""
    return terms_and_figures(text)[1]


def terms_and_figures(text: str) -> tuple[list[str], float]:
    """A page's word terms (pipeline.text.word_terms) and its figure share, from one tokenisation."""
    terms = bm25_tokens(text)
    words = [t for t in terms if any(c.isalpha() for c in t)]
    return words, (len(terms) - len(words)) / len(terms) if terms else 0.0


class PageTexts:
    """While building: the word terms and figure share of every page that has chunks, and the row of its
    first chunk, streamed into the page index's BM25 rows as each document arrives."""

    def __init__(self) -> None:
        self.terms = BM25Builder()
        self.first_rows = array("q")
        self.figures = array("f")

    def add_known(self, pages: Sequence[tuple[int, list[str], float]], chunks: Sequence[Chunk]) -> None:
        """Record one document's pages from (page, word terms, figure share) computed before, in page order."""
        known = {page: (terms, share) for page, terms, share in pages}
        last = 0
        for chunk in chunks:
            if chunk.page != last:
                terms, share = known[chunk.page]
                self.terms.add(terms)
                self.figures.append(share)
                self.first_rows.append(chunk.row)
                last = chunk.page

    def save(self, directory: Path) -> None:
        """Write the page BM25 index (words only), the first rows and each page's figure share."""
        self.terms.build().save(directory / PAGES_BM25)
        np.save(directory / PAGES_FIRST_ROWS, np.asarray(self.first_rows, dtype=np.int64), allow_pickle=False)
        np.save(directory / PAGES_FIGURES, np.asarray(self.figures, dtype=np.float32), allow_pickle=False)


def pages_with_chunks(chunks: Sequence[Chunk] | Sequence[PageChunk]) -> list[int]:
    """The pages (1-based, in order, each once) that chunks come from."""
    return list(dict.fromkeys(c.page for c in chunks))


@dataclass(frozen=True)
class PageIndex:
    """Page-level BM25 and, for page row i, the row of its first chunk (ascending) and its figure share."""

    bm25: BM25Index
    first_rows: npt.NDArray[np.int64]
    figures: npt.NDArray[np.float32]

    @classmethod
    def load(cls, root: Path, chunk_count: int) -> PageIndex | None:
        """The generation's page index; None when it was built without one."""
        if not (root / PAGES_BM25).is_dir():
            return None
        first_rows = np.load(root / PAGES_FIRST_ROWS, allow_pickle=False).astype(np.int64, copy=False)
        ordered = bool(np.all(np.diff(first_rows) > 0))
        if first_rows.ndim != 1 or not ordered or (len(first_rows) and not 0 <= first_rows[-1] < chunk_count):
            raise IndexCorruptError(str(root), [f"{PAGES_FIRST_ROWS} disagrees with the {chunk_count} chunks"])
        figures = np.load(root / PAGES_FIGURES, allow_pickle=False).astype(np.float32, copy=False)
        if figures.shape != first_rows.shape or not bool(np.all((figures >= 0) & (figures <= 1))):
            raise IndexCorruptError(str(root), [f"{PAGES_FIGURES} disagrees with {PAGES_FIRST_ROWS}"])
        return cls(BM25Index.load(root / PAGES_BM25, len(first_rows)), first_rows, figures)

    def page_rows(self, chunk_rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The page rows holding `chunk_rows`, ascending and each once."""
        return np.unique(np.searchsorted(self.first_rows, chunk_rows, side="right") - 1).astype(np.int64)

    def ranked_chunks(
        self,
        query: str,
        depth: int,
        chunk_rows: npt.NDArray[np.int64] | None,
        chunk_order: Sequence[int],
        figure_weight: float = 0.0,
    ) -> list[int]:
        """Chunk rows standing for the top `depth` pages by the page index (restricted to the pages of
        `chunk_rows` when given), each score times 1 + figure_weight x the page's figure share: each
        page by its best-placed chunk in `chunk_order`, else its first."""
        pages = np.arange(len(self.first_rows), dtype=np.int64) if chunk_rows is None else self.page_rows(chunk_rows)
        scores = self.bm25.scores(query)[pages] * (1 + figure_weight * self.figures[pages])
        keep = scores > 0
        found, _ = top_k(scores[keep], pages[keep], depth)
        if not len(found):
            return []
        placed: dict[int, int] = {}
        owners = np.searchsorted(self.first_rows, np.asarray(chunk_order, dtype=np.int64), side="right") - 1
        for row, page in zip(chunk_order, owners.tolist(), strict=True):
            placed.setdefault(page, row)
        return [placed.get(page, int(self.first_rows[page])) for page in found.tolist()]
