"""The SQLite catalog: documents, entities and their aliases, relationships, chunks."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from pipeline.errors import IndexCorruptError
from pipeline.store.xbrl import PageFact
from pipeline.types import Chunk, Document, Entity, RowCell, StrictJson, TableRow
from pipeline.vocabulary import Vocabulary, dump_vocabulary, load_vocabulary

# The project's own namespace for uuid5 ids (itself a fixed uuid5 of the project name).
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "scoperag")


def document_id(corpus: str, relpath: str) -> str:
    """Stable document id: the same corpus name and relative path give the same id."""
    return str(uuid.uuid5(NAMESPACE, f"doc:{corpus}:{relpath}"))


def entity_id(corpus: str, slug: str) -> str:
    """Stable id of an owning entity (a property, a company) within a corpus."""
    return str(uuid.uuid5(NAMESPACE, f"entity:{corpus}:{slug}"))


SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entities (
    entity_id TEXT PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL, kind TEXT NOT NULL
);
CREATE TABLE entity_aliases (
    entity_id TEXT NOT NULL REFERENCES entities(entity_id), alias TEXT NOT NULL,
    PRIMARY KEY (entity_id, alias)
);
CREATE TABLE documents (
    document_id TEXT PRIMARY KEY, relpath TEXT NOT NULL UNIQUE, filename TEXT NOT NULL,
    title TEXT NOT NULL, summary TEXT NOT NULL, summary_source TEXT NOT NULL,
    doc_type TEXT NOT NULL, page_count INTEGER NOT NULL, sha256 TEXT NOT NULL,
    row_start INTEGER NOT NULL, row_end INTEGER NOT NULL, ordinal INTEGER NOT NULL UNIQUE,
    opening TEXT NOT NULL, outside INTEGER NOT NULL
);
CREATE TABLE document_entities (
    document_id TEXT NOT NULL REFERENCES documents(document_id),
    entity_id TEXT NOT NULL REFERENCES entities(entity_id), rank INTEGER NOT NULL,
    PRIMARY KEY (document_id, entity_id)
);
CREATE TABLE document_attributes (
    document_id TEXT NOT NULL REFERENCES documents(document_id), key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (document_id, key)
);
CREATE TABLE chunks (
    row INTEGER PRIMARY KEY, document_id TEXT NOT NULL REFERENCES documents(document_id),
    page INTEGER NOT NULL, ordinal INTEGER NOT NULL, text TEXT NOT NULL
);
-- Rules of a document that differ from the default: the entity gate's text rules judge it although
-- the catalog declares its owners (text_rules), and the document it amends (amends).
CREATE TABLE document_rules (
    document_id TEXT PRIMARY KEY REFERENCES documents(document_id), text_rules INTEGER NOT NULL,
    amends TEXT REFERENCES documents(document_id)
);
CREATE INDEX chunks_by_document ON chunks(document_id);
CREATE TABLE page_facts (
    document_id TEXT NOT NULL REFERENCES documents(document_id), page INTEGER NOT NULL, concept TEXT NOT NULL,
    value TEXT NOT NULL, shown TEXT NOT NULL, scale INTEGER NOT NULL, unit TEXT, period_start TEXT,
    period_end TEXT, dimensions TEXT NOT NULL, decimals TEXT
);
CREATE INDEX page_facts_by_page ON page_facts(document_id, page);
-- Table rows as the readers found them (pipeline.types.TableRow): cells as JSON [[text, header], ...],
-- parents as JSON [label, ...].
CREATE TABLE page_rows (
    document_id TEXT NOT NULL REFERENCES documents(document_id), page INTEGER NOT NULL,
    table_no INTEGER NOT NULL, ordinal INTEGER NOT NULL, label TEXT NOT NULL, cells TEXT NOT NULL,
    parents TEXT NOT NULL, scale TEXT, currency TEXT, title TEXT NOT NULL,
    PRIMARY KEY (document_id, ordinal)
);
CREATE INDEX page_rows_by_page ON page_rows(document_id, page);
CREATE INDEX document_entities_by_entity ON document_entities(entity_id);
"""


VOCABULARY_KEY = "vocabulary"
# meta key of the files the build skipped: JSON {relative path: reason}
SKIPPED_KEY = "skipped"


class _RowJson(StrictJson):
    """A stored row's cells and parents, checked when read."""

    cells: tuple[tuple[str, str], ...]
    parents: tuple[str, ...]


class CatalogWriter:
    """Writes a new catalog file; rows must be added document by document. The corpus's vocabulary
    is stored with it (versioned JSON in `meta`)."""

    def __init__(self, path: Path, vocabulary: Vocabulary | None = None) -> None:
        self._db = sqlite3.connect(path)
        self._db.executescript(SCHEMA)
        self.set_meta(VOCABULARY_KEY, dump_vocabulary(vocabulary or Vocabulary()))

    def add_entity(self, entity: Entity, kind: str) -> None:
        self._db.execute("INSERT INTO entities VALUES (?, ?, ?, ?)", (entity.entity_id, entity.slug, entity.name, kind))
        self._db.executemany(
            "INSERT OR IGNORE INTO entity_aliases VALUES (?, ?)",
            [(entity.entity_id, alias) for alias in entity.aliases],
        )

    def add_document(self, document: Document, summary_source: str, sha256: str, row_start: int, ordinal: int) -> None:
        self._db.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                document.document_id,
                document.relpath,
                document.filename,
                document.title,
                document.summary,
                summary_source,
                document.doc_type,
                document.page_count,
                sha256,
                row_start,
                row_start,
                ordinal,
                document.opening,
                int(document.outside),
            ),
        )
        self._db.executemany(
            "INSERT INTO document_entities VALUES (?, ?, ?)",
            [(document.document_id, eid, rank) for rank, eid in enumerate(document.entity_ids)],
        )
        self._db.executemany(
            "INSERT INTO document_attributes VALUES (?, ?, ?)",
            [(document.document_id, k, v) for k, v in document.attributes],
        )
        if document.text_rules or document.amends:
            self._db.execute(
                "INSERT INTO document_rules VALUES (?, ?, ?)",
                (document.document_id, int(document.text_rules), document.amends),
            )

    def add_chunks(self, chunks: Iterable[Chunk]) -> None:
        rows = [(c.row, c.document_id, c.page, c.ordinal, c.text) for c in chunks]
        self._db.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?)", rows)
        if rows:
            self._db.execute("UPDATE documents SET row_end = ? WHERE document_id = ?", (rows[-1][0] + 1, rows[-1][1]))

    def add_facts(self, document_id: str, facts: Iterable[PageFact]) -> None:
        """The figures a document tags on its pages (dimensions stored one per line)."""
        self._db.executemany(
            "INSERT INTO page_facts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    document_id,
                    f.page,
                    f.concept,
                    f.value,
                    f.shown,
                    f.scale,
                    f.unit,
                    f.period_start,
                    f.period_end,
                    "\n".join(f.dimensions),
                    f.decimals,
                )
                for f in facts
            ],
        )

    def add_rows(self, document_id: str, rows: Iterable[TableRow]) -> None:
        """The table rows a reader found on a document's pages."""
        self._db.executemany(
            "INSERT INTO page_rows VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    document_id,
                    r.page,
                    r.table,
                    r.ordinal,
                    r.label,
                    json.dumps([[c.text, c.header] for c in r.cells], ensure_ascii=False),
                    json.dumps(list(r.parents), ensure_ascii=False),
                    r.scale,
                    r.currency,
                    r.title,
                )
                for r in rows
            ],
        )

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def close(self) -> None:
        self._db.commit()
        self._db.execute("VACUUM")
        self._db.close()


class Catalog:
    """Read-only view of a catalog; documents and entities are held in memory."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
        self.meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        aliases: dict[str, list[str]] = {}
        for entity_id, alias in self._db.execute("SELECT entity_id, alias FROM entity_aliases ORDER BY alias"):
            aliases.setdefault(entity_id, []).append(alias)
        self.entities: dict[str, Entity] = {
            eid: Entity(eid, slug, name, tuple(aliases.get(eid, ())))
            for eid, slug, name in self._db.execute("SELECT entity_id, slug, name FROM entities ORDER BY slug")
        }
        self.entity_kind = self.meta.get("entity_kind", "entity")
        # relative path -> why the build skipped the file (a corrupt PDF, an empty file)
        self.skipped = self._skipped(path)
        self.vocabulary = self._vocabulary(path)
        self._has_rows = bool(self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'page_rows'").fetchone())
        self._require_columns(path)
        owners: dict[str, list[str]] = {}
        for did, eid in self._db.execute("SELECT document_id, entity_id FROM document_entities ORDER BY rank"):
            owners.setdefault(did, []).append(eid)
        attrs: dict[str, list[tuple[str, str]]] = {}
        for did, key, value in self._db.execute("SELECT * FROM document_attributes ORDER BY key"):
            attrs.setdefault(did, []).append((key, value))
        rules = self._rules()
        self.documents: dict[str, Document] = {}
        starts, ends = [], []
        query = (
            "SELECT document_id, filename, relpath, title, summary, doc_type, page_count, row_start, row_end, opening,"
            " outside FROM documents ORDER BY ordinal"
        )
        for did, filename, relpath, title, summary, doc_type, pages, start, end, opening, outside in self._db.execute(
            query
        ):
            self.documents[did] = Document(
                did,
                filename,
                relpath,
                title,
                summary,
                doc_type,
                pages,
                tuple(owners.get(did, ())),
                tuple(attrs.get(did, ())),
                opening,
                bool(outside),
                *rules.get(did, (False, None)),
            )
            starts.append(start)
            ends.append(end)
        self.document_order: list[str] = list(self.documents)
        self._doc_index = {did: i for i, did in enumerate(self.document_order)}
        self.row_start = np.array(starts, dtype=np.int64)
        self.row_end = np.array(ends, dtype=np.int64)
        self.chunk_count = int(self.row_end.max()) if len(ends) else 0
        # chunk row -> document position, for mapping dense and BM25 hits back to documents
        self.row_document = np.zeros(self.chunk_count, dtype=np.int32)
        for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
            self.row_document[start:end] = i

    def _skipped(self, path: Path) -> dict[str, str]:
        """The files the build skipped, with why; IndexCorruptError when the record is malformed."""
        try:
            skipped = json.loads(self.meta.get(SKIPPED_KEY, "{}"))
        except ValueError:
            skipped = None
        if not isinstance(skipped, dict) or not all(isinstance(v, str) for v in skipped.values()):
            raise IndexCorruptError(
                str(path), ["the catalog's record of skipped files is malformed: rebuild the index"]
            )
        return skipped

    def _rules(self) -> dict[str, tuple[bool, str | None]]:
        """document id -> (text rules judge it, the document it amends); none in a catalog built before
        these rules existed (whose documents then follow the defaults)."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "document_rules" not in tables:
            return {}
        rows = self._db.execute("SELECT document_id, text_rules, amends FROM document_rules")
        return {did: (bool(text_rules), amends) for did, text_rules, amends in rows}

    def _vocabulary(self, path: Path) -> Vocabulary:
        """The stored vocabulary; IndexCorruptError when it is missing (an older build) or invalid."""
        stored = self.meta.get(VOCABULARY_KEY)
        if stored is None:
            raise IndexCorruptError(str(path), ["the catalog stores no corpus vocabulary (built by an older scoperag)"])
        try:
            return load_vocabulary(stored)
        except ValueError as exc:
            raise IndexCorruptError(str(path), [str(exc)]) from None

    def _require_columns(self, path: Path) -> None:
        """IndexCorruptError when the catalog lacks a column this version reads (an older build)."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(documents)")}
        missing = sorted({"opening", "outside"} - columns)
        if missing:
            raise IndexCorruptError(
                str(path), [f"the catalog lacks {', '.join(missing)} (built by an older scoperag): rebuild the index"]
            )

    def document_position(self, document_id: str) -> int:
        """Position of a document in document order (its row in the document indexes)."""
        return self._doc_index[document_id]

    def rows_for_documents(self, document_ids: Sequence[str]) -> npt.NDArray[np.int64]:
        """Sorted chunk rows of the given (known) documents."""
        parts = [
            np.arange(self.row_start[self._doc_index[d]], self.row_end[self._doc_index[d]], dtype=np.int64)
            for d in sorted(set(document_ids))
        ]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def chunks(self, rows: Sequence[int]) -> list[Chunk]:
        """The chunks at the given rows, in the order asked."""
        wanted = [int(r) for r in rows]
        if not wanted:
            return []
        found: dict[int, Chunk] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row, did, page, ordinal, text in self._db.execute(
                f"SELECT row, document_id, page, ordinal, text FROM chunks WHERE row IN ({marks})", batch
            ):
                found[row] = Chunk(row, did, page, ordinal, text)
        return [found[r] for r in wanted]

    def page_chunks(self, document_id: str, page: int) -> list[Chunk]:
        """The chunks of one page of a document, in order."""
        rows = self._db.execute(
            "SELECT row, document_id, page, ordinal, text FROM chunks WHERE document_id = ? AND page = ? ORDER BY row",
            (document_id, page),
        )
        return [Chunk(row, did, pg, ordinal, text) for row, did, pg, ordinal, text in rows]

    def page_facts(self, document_id: str, page: int | None = None) -> list[PageFact]:
        """The figures tagged on a document's pages (on one page when `page` is given), in page order;
        none for a catalog built before facts were kept."""
        if not self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'page_facts'").fetchone():
            return []
        where, args = ("AND page = ?", (document_id, page)) if page is not None else ("", (document_id,))
        rows = self._db.execute(
            "SELECT page, concept, value, shown, scale, unit, period_start, period_end, dimensions, decimals"
            f" FROM page_facts WHERE document_id = ? {where} ORDER BY page, rowid",
            args,
        )
        return [
            PageFact(page, concept, value, shown, scale, unit, start, end, tuple(d.split("\n")) if d else (), dec)
            for page, concept, value, shown, scale, unit, start, end, d, dec in rows
        ]

    def page_rows(self, document_id: str, pages: Sequence[int] | None = None) -> list[TableRow]:
        """The table rows on the given pages of a document (every page when `pages` is None), in document
        order; none for a catalog built before rows were kept. A stored row not of the shape written is
        skipped."""
        if (pages is not None and not pages) or not self._has_rows:
            return []
        columns = "SELECT page, table_no, ordinal, label, cells, parents, scale, currency, title FROM page_rows"
        if pages is None:
            found = self._db.execute(f"{columns} WHERE document_id = ? ORDER BY ordinal", (document_id,))
        else:
            marks = ",".join("?" * len(pages))
            found = self._db.execute(
                f"{columns} WHERE document_id = ? AND page IN ({marks}) ORDER BY ordinal", (document_id, *pages)
            )
        out: list[TableRow] = []
        for page, table, ordinal, label, cells, parents, scale, currency, title in found:
            try:
                parsed = _RowJson.model_validate_json(f'{{"cells": {cells}, "parents": {parents}}}')
            except ValidationError:
                continue
            row_cells = tuple(RowCell(text, header) for text, header in parsed.cells)
            out.append(TableRow(page, table, ordinal, label, row_cells, parsed.parents, scale, currency, title))
        return out

    def document_ids_for_entity(self, entity_id: str) -> list[str]:
        """Every document related to the entity, in catalog order (the one scope query)."""
        rows = self._db.execute(
            "SELECT de.document_id FROM document_entities de JOIN documents d USING (document_id)"
            " WHERE de.entity_id = ? ORDER BY d.ordinal",
            (entity_id,),
        )
        return [r[0] for r in rows]

    def close(self) -> None:
        self._db.close()
