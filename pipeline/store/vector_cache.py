"""Chunk vectors by content hash, kept beside an index's generations so builds embed only new text.

One SQLite table: (embedder, sha256 of the text) -> the vector's float32 bytes. Every embedded
batch is committed at once, so a build killed halfway leaves what it embedded for the next
build to reuse. The cache is never part of a published generation: losing it costs time,
never correctness. Rows are read back with `np.frombuffer` and checked (length, finite
values); a row that fails is embedded again, and a cache that cannot be used at all is set aside.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pipeline.store.sqlite_cache import open_cache

log = logging.getLogger(__name__)

CACHE_NAME = "vector-cache.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    embedder TEXT NOT NULL, key BLOB NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (embedder, key)
) WITHOUT ROWID;
"""
_BATCH = 500  # keys per SQL statement (below SQLite's variable limit)


def text_key(text: str) -> bytes:
    """The cache key of a chunk text: its sha256."""
    return hashlib.sha256(text.encode("utf-8")).digest()


# The columns of `vectors` as PRAGMA table_info gives them: (name, type, not null, primary key position).
_COLUMNS = [("embedder", "TEXT", 1, 1), ("key", "BLOB", 1, 2), ("vector", "BLOB", 1, 0)]


class VectorCache:
    """Vectors of one embedder (`embedder` names model and dimension) in the SQLite file at `path`.

    A cache that cannot be used as it is, a `vectors` table of another shape included, is set aside and a new
    one started (pipeline.store.sqlite_cache)."""

    def __init__(self, path: Path, embedder: str, dim: int) -> None:
        self.path = path
        self.embedder = f"{embedder}/{dim}"
        self.dim = dim
        self._db = open_cache(path, _prepare, "vector cache")

    def get(self, keys: Sequence[bytes]) -> dict[bytes, npt.NDArray[np.float32]]:
        """The stored, well-formed vectors of those `keys` that have one."""
        found: dict[bytes, npt.NDArray[np.float32]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _BATCH):
            batch = unique[start : start + _BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE embedder = ? AND key IN ({marks})", [self.embedder, *batch]
            )
            for key, blob in rows:
                if len(blob) != self.dim * 4:
                    continue
                vector = np.frombuffer(blob, dtype="<f4")
                if np.isfinite(vector).all():
                    found[key] = vector.astype(np.float32)
        return found

    def put(self, keys: Sequence[bytes], vectors: npt.NDArray[np.float32]) -> None:
        """Store `vectors` (one row per key) and commit them."""
        data = np.ascontiguousarray(vectors, dtype="<f4")
        rows = [(self.embedder, key, row.tobytes()) for key, row in zip(keys, data, strict=True)]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)

    def keep_only(self, keys: Iterable[bytes]) -> int:
        """Delete this embedder's vectors whose key is not in `keys`; how many were deleted."""
        with self._db:
            self._db.execute("CREATE TEMP TABLE IF NOT EXISTS keep (key BLOB PRIMARY KEY) WITHOUT ROWID")
            self._db.execute("DELETE FROM keep")
            self._db.executemany("INSERT OR IGNORE INTO keep VALUES (?)", ((k,) for k in keys))
            deleted = self._db.execute(
                "DELETE FROM vectors WHERE embedder = ? AND key NOT IN (SELECT key FROM keep)", (self.embedder,)
            ).rowcount
            self._db.execute("DELETE FROM keep")
        return int(deleted)

    def close(self) -> None:
        self._db.close()


def _prepare(db: sqlite3.Connection) -> None:
    """The `vectors` table, created or checked to have the columns this code reads."""
    db.executescript(_SCHEMA)
    columns = [(name, kind, notnull, pk) for _, name, kind, notnull, _, pk in db.execute("PRAGMA table_info(vectors)")]
    if columns != _COLUMNS:
        raise sqlite3.DatabaseError(f"table vectors has columns {[c[0] for c in columns]}, not embedder, key, vector")
