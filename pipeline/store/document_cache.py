"""What a build derives from each file, kept by the file's content so the next build reuses it.

Reading an HTML filing, chunking it, tokenising its chunks and pages and counting its name words cost
more than everything else a build does; a collection grows a filing at a time. One SQLite table maps
(sha256 of the file's bytes, the settings that shape what it gives) to that work, as compressed JSON
validated on the way back in (never unpickled). Like the vector cache it lives beside the generations,
never inside one: a lost or unusable cache costs time, not correctness; a row that fails validation is
derived again. After a publish it keeps only the files of the new generation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from pipeline.store.chunking import PageChunk, chunk_pages
from pipeline.store.corpus import FrontMatter
from pipeline.store.name_words import NameWordCounter
from pipeline.store.pages import pages_with_chunks, terms_and_figures
from pipeline.store.reading import SourceFile
from pipeline.store.sqlite_cache import open_cache
from pipeline.store.xbrl import PageFact
from pipeline.text import bm25_tokens
from pipeline.types import RowCell, Strict, TableRow

log = logging.getLogger(__name__)

CACHE_NAME = "document-cache.sqlite"
# Raised whenever reading, chunking, tokenising or name-word counting changes what a file gives.
DERIVATION_VERSION = 10
_SCHEMA = "CREATE TABLE IF NOT EXISTS documents (key TEXT PRIMARY KEY, payload BLOB NOT NULL) WITHOUT ROWID"


@dataclass(frozen=True)
class Derived:
    """One file as a build uses it: its source, chunks, index terms and name-word observations."""

    source: SourceFile
    chunks: tuple[PageChunk, ...]
    # Space-joined BM25 terms of each chunk (terms hold no spaces).
    chunk_terms: tuple[str, ...]
    # (page, space-joined word terms, figure share) of each page that has chunks, in page order.
    page_terms: tuple[tuple[int, str, float], ...]
    # Name words this document writes as ordinary words, and those it uses for others (NameWordCounter).
    ordinary: tuple[str, ...]
    foreign: tuple[str, ...]


def derive(source: SourceFile, words: int, overlap: int, names: NameWordCounter, owners: Sequence[str]) -> Derived:
    """Chunks, chunk and page terms and name-word observations of a file just read."""
    chunks = tuple(chunk_pages(source.pages, words, overlap))
    page_terms = []
    for page in pages_with_chunks(chunks):
        terms, share = terms_and_figures(source.pages[page - 1])
        page_terms.append((page, " ".join(terms), share))
    ordinary, foreign = names.observe(source.pages, owners)
    return Derived(
        source,
        chunks,
        tuple(" ".join(bm25_tokens(c.text)) for c in chunks),
        tuple(page_terms),
        tuple(sorted(ordinary)),
        tuple(sorted(foreign)),
    )


def derivation_key(file_sha256: str, relpath: str, words: int, overlap: int, names: str, owners: Sequence[str]) -> str:
    """The cache key: the file's content and everything else its derivation depends on (the relative path
    only through the reader's error messages and page text, so it is part of the key too)."""
    parts = [str(DERIVATION_VERSION), file_sha256, relpath, str(words), str(overlap), names, *sorted(owners)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


# A fact as stored: page, concept, value, shown, scale, unit, period start, period end, dimensions, decimals
# (a row, not an object: a filing holds thousands, and rows validate an order of magnitude faster).
_FactRow = tuple[int, str, str, str, int, str | None, str | None, str | None, tuple[str, ...], str | None]
# A table row as stored: page, table, ordinal, label, cells as (text, header), parents, scale, currency, title.
_TableRow = tuple[int, int, int, str, tuple[tuple[str, str], ...], tuple[str, ...], str | None, str | None, str]


class _Payload(Strict):
    """The stored form of a Derived (checked when read back)."""

    relpath: str
    pages: tuple[str, ...]
    own: FrontMatter
    hidden: dict[str, int]
    facts: tuple[_FactRow, ...]
    rows: tuple[_TableRow, ...] = ()
    paged_by: str
    chunks: tuple[tuple[int, str], ...]
    chunk_terms: tuple[str, ...]
    page_terms: tuple[tuple[int, str, float], ...]
    ordinary: tuple[str, ...]
    foreign: tuple[str, ...]


def _dump(derived: Derived) -> bytes:
    s = derived.source
    payload = {
        "relpath": s.relpath,
        "pages": s.pages,
        "own": s.own.model_dump(),
        "hidden": s.hidden,
        # field by field: dataclasses.astuple deep-copies every value, most of a large filing's storing time
        "facts": [
            (
                f.page,
                f.concept,
                f.value,
                f.shown,
                f.scale,
                f.unit,
                f.period_start,
                f.period_end,
                f.dimensions,
                f.decimals,
            )
            for f in s.facts
        ],
        "rows": [_row_tuple(r) for r in s.rows],
        "paged_by": s.paged_by,
        "chunks": [(c.page, c.text) for c in derived.chunks],
        "chunk_terms": derived.chunk_terms,
        "page_terms": derived.page_terms,
        "ordinary": derived.ordinary,
        "foreign": derived.foreign,
    }
    return zlib.compress(json.dumps(payload, ensure_ascii=False).encode("utf-8"), 1)


def _load(blob: bytes) -> Derived:
    p = _Payload.model_validate_json(zlib.decompress(blob))
    chunks = tuple(PageChunk(page, ordinal, text) for ordinal, (page, text) in enumerate(p.chunks))
    if len(p.chunk_terms) != len(chunks) or any(not 1 <= c.page <= len(p.pages) for c in chunks):
        raise ValueError("chunks disagree with pages or terms")
    facts = tuple(PageFact(*row) for row in p.facts)
    rows = tuple(
        TableRow(page, table, ordinal, label, tuple(RowCell(t, h) for t, h in cells), parents, scale, currency, title)
        for page, table, ordinal, label, cells, parents, scale, currency, title in p.rows
    )
    if any(not 1 <= r.page <= len(p.pages) for r in rows):
        raise ValueError("table rows disagree with pages")
    source = SourceFile(p.relpath, p.pages, p.own, p.hidden, facts=facts, rows=rows, paged_by=p.paged_by)
    return Derived(source, chunks, p.chunk_terms, p.page_terms, p.ordinary, p.foreign)


def _row_tuple(row: TableRow) -> _TableRow:
    cells = tuple((c.text, c.header) for c in row.cells)
    return (row.page, row.table, row.ordinal, row.label, cells, row.parents, row.scale, row.currency, row.title)


def _prepare(db: sqlite3.Connection) -> None:
    db.execute(_SCHEMA)


class DocumentCache:
    """Derived files by key in the SQLite file at `path` (created when missing, set aside when unusable:
    pipeline.store.sqlite_cache)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = open_cache(path, _prepare, "document cache")

    def present(self, keys: Sequence[str]) -> set[str]:
        """Those of `keys` that have a row (its payload is checked when read)."""
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            marks = ",".join("?" * len(batch))
            found.update(k for (k,) in self._db.execute(f"SELECT key FROM documents WHERE key IN ({marks})", batch))
        return found

    def get(self, key: str) -> Derived | None:
        """The derived file stored under `key`, None when there is none or it fails its checks."""
        row = self._db.execute("SELECT payload FROM documents WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return _load(row[0])
        except (zlib.error, ValidationError, ValueError, TypeError) as exc:
            log.warning("document cache row %s is unusable (%s); reading the file again", key[:12], exc)
            return None

    def put(self, key: str, derived: Derived) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO documents VALUES (?, ?)", (key, _dump(derived)))

    def keep_only(self, keys: Iterable[str]) -> None:
        """Delete every row whose key is not in `keys`."""
        kept = set(keys)
        stale = [(k,) for (k,) in self._db.execute("SELECT key FROM documents") if k not in kept]
        with self._db:
            self._db.executemany("DELETE FROM documents WHERE key = ?", stale)

    def close(self) -> None:
        self._db.close()
