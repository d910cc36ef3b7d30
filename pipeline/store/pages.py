"""The page index: BM25 over each page's words, so a question finds the page that answers it even
when its terms are spread over several chunks of that page (a table's row labels, its heading)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pipeline.errors import IndexCorruptError
from pipeline.retrieval.bm25 import BM25Index
from pipeline.retrieval.topk import top_k
from pipeline.text import bm25_tokens, word_terms
from pipeline.types import Chunk

PAGES_BM25 = "pages_bm25"
PAGES_FIRST_ROWS = "pages_first_rows.npy"
PAGES_FIGURES = "pages_figures.npy"


def figure_share(text: str) -> float:
    """The share of `text`'s index terms that are figures (amounts, dates, numbers): near 1 on a
    financial statement or a schedule, near 0 on prose."""
    terms = bm25_tokens(text)
    return sum(1 for t in terms if not any(c.isalpha() for c in t)) / len(terms) if terms else 0.0


@dataclass
class PageTexts:
    """While building: the text of every page that has chunks, and the row of its first chunk."""

    texts: list[str]
    first_rows: list[int]

    def add(self, pages: Sequence[str], chunks: Sequence[Chunk]) -> None:
        """Record the pages of one document that `chunks` (all its chunks, in order) come from."""
        last = 0
        for chunk in chunks:
            if chunk.page != last:
                self.texts.append(pages[chunk.page - 1])
                self.first_rows.append(chunk.row)
                last = chunk.page

    def save(self, directory: Path) -> None:
        """Write the page BM25 index (words only, pipeline.text.word_terms), the first rows and each
        page's figure share."""
        BM25Index.build_from_tokens([word_terms(t) for t in self.texts]).save(directory / PAGES_BM25)
        np.save(directory / PAGES_FIRST_ROWS, np.asarray(self.first_rows, dtype=np.int64), allow_pickle=False)
        figures = np.asarray([figure_share(t) for t in self.texts], dtype=np.float32)
        np.save(directory / PAGES_FIGURES, figures, allow_pickle=False)


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
