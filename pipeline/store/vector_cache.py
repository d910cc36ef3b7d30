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
_COMPANIONS = ("", "-wal", "-shm")  # SQLite's write-ahead log and shared memory beside the database file


class VectorCache:
    """Vectors of one embedder (`embedder` names model and dimension) in the SQLite file at `path`.

    A cache that cannot be used as it is (a directory or another kind of file in its place, a file that is no
    SQLite database, a `vectors` table of another shape) is set aside under a new name, with a warning, and a
    new one is started: no later build fails on it, and nothing anyone put there is deleted."""

    def __init__(self, path: Path, embedder: str, dim: int) -> None:
        self.path = path
        self.embedder = f"{embedder}/{dim}"
        self.dim = dim
        try:
            self._db = self._open()
        except (sqlite3.DatabaseError, OSError) as exc:
            aside = set_aside(path)
            log.warning("vector cache %s is unusable (%s); moved to %s, starting a new one", path, exc, aside.name)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        for companion in _COMPANIONS:
            part = self.path.with_name(self.path.name + companion)
            if part.is_symlink() or (part.exists() and not part.is_file()):
                raise sqlite3.DatabaseError(f"{part.name} is not a regular file")
        db = sqlite3.connect(self.path, check_same_thread=False)
        try:
            # WAL: a committed batch survives the process being killed; NORMAL: no fsync per batch.
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            columns = [
                (name, kind, notnull, pk) for _, name, kind, notnull, _, pk in db.execute("PRAGMA table_info(vectors)")
            ]
            if columns != _COLUMNS:
                raise sqlite3.DatabaseError(
                    f"table vectors has columns {[c[0] for c in columns]}, not embedder, key, vector"
                )
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

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


def set_aside(path: Path) -> Path:
    """Move the cache at `path` (and its write-ahead log and shared memory, if any) to the first free name
    `<name>.unusable[-N]`; the new path of the cache."""
    number = 1
    while True:
        aside = path.with_name(f"{path.name}.unusable" + (f"-{number}" if number > 1 else ""))
        if not any(_taken(aside.with_name(aside.name + c)) for c in _COMPANIONS):
            break
        number += 1
    for companion in _COMPANIONS:
        part = path.with_name(path.name + companion)
        if _taken(part):
            part.rename(aside.with_name(aside.name + companion))
    return aside


def _taken(path: Path) -> bool:
    return path.exists() or path.is_symlink()
