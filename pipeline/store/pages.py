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
from pipeline.text import word_terms
from pipeline.types import Chunk

PAGES_BM25 = "pages_bm25"
PAGES_FIRST_ROWS = "pages_first_rows.npy"


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
        """Write the page BM25 index (words only, pipeline.text.word_terms) and the first rows."""
        BM25Index.build_from_tokens([word_terms(t) for t in self.texts]).save(directory / PAGES_BM25)
        np.save(directory / PAGES_FIRST_ROWS, np.asarray(self.first_rows, dtype=np.int64), allow_pickle=False)


@dataclass(frozen=True)
class PageIndex:
    """Page-level BM25 and, for page row i, the row of its first chunk (ascending)."""

    bm25: BM25Index
    first_rows: npt.NDArray[np.int64]

    @classmethod
    def load(cls, root: Path, chunk_count: int) -> PageIndex | None:
        """The generation's page index; None when it was built without one."""
        if not (root / PAGES_BM25).is_dir():
            return None
        first_rows = np.load(root / PAGES_FIRST_ROWS, allow_pickle=False).astype(np.int64, copy=False)
        ordered = bool(np.all(np.diff(first_rows) > 0))
        if first_rows.ndim != 1 or not ordered or (len(first_rows) and not 0 <= first_rows[-1] < chunk_count):
            raise IndexCorruptError(str(root), [f"{PAGES_FIRST_ROWS} disagrees with the {chunk_count} chunks"])
        return cls(BM25Index.load(root / PAGES_BM25, len(first_rows)), first_rows)

    def page_rows(self, chunk_rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The page rows holding `chunk_rows`, ascending and each once."""
        return np.unique(np.searchsorted(self.first_rows, chunk_rows, side="right") - 1).astype(np.int64)

    def ranked_chunks(
        self, query: str, depth: int, chunk_rows: npt.NDArray[np.int64] | None, chunk_order: Sequence[int]
    ) -> list[int]:
        """Chunk rows standing for the top `depth` pages by the page index (restricted to the pages of
        `chunk_rows` when given): each page by its best-placed chunk in `chunk_order`, else its first."""
        pages = None if chunk_rows is None else self.page_rows(chunk_rows)
        found, _ = self.bm25.search(query, depth, pages)
        if not len(found):
            return []
        placed: dict[int, int] = {}
        owners = np.searchsorted(self.first_rows, np.asarray(chunk_order, dtype=np.int64), side="right") - 1
        for row, page in zip(chunk_order, owners.tolist(), strict=True):
            placed.setdefault(page, row)
        return [placed.get(page, int(self.first_rows[page])) for page in found.tolist()]
