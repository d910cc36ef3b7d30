"""Opening a build cache kept in one SQLite file (the vector cache, the document cache): write-ahead logged,
checked, and set aside when it cannot be used.

A cache that cannot be used as it is (a directory, a link or another kind of file in its place, a file that
is no SQLite database, a table of another shape) is moved aside under a new name, with a warning, and a new
one is started: no later build fails on it, and nothing anyone put there is deleted.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

COMPANIONS = ("", "-wal", "-shm")  # SQLite's write-ahead log and shared memory beside the database file


def open_cache(path: Path, prepare: Callable[[sqlite3.Connection], None], what: str) -> sqlite3.Connection:
    """The cache at `path`, `prepare`d (its schema created and checked: raise sqlite3.DatabaseError when it
    does not fit); an unusable one is set aside first and a new one opened. `what` names it in the warning."""
    try:
        return _open(path, prepare)
    except (sqlite3.DatabaseError, OSError) as exc:
        aside = set_aside(path)
        log.warning("%s %s is unusable (%s); moved to %s, starting a new one", what, path, exc, aside.name)
        return _open(path, prepare)


def _open(path: Path, prepare: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    for companion in COMPANIONS:
        part = path.with_name(path.name + companion)
        if part.is_symlink() or (part.exists() and not part.is_file()):
            raise sqlite3.DatabaseError(f"{part.name} is not a regular file")
    db = sqlite3.connect(path, check_same_thread=False)
    try:
        # WAL: a committed batch survives the process being killed; NORMAL: no fsync per batch.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        prepare(db)
    except sqlite3.DatabaseError:
        db.close()
        raise
    return db


def set_aside(path: Path) -> Path:
    """Move the cache at `path` (and its write-ahead log and shared memory, if any) to the first free name
    `<name>.unusable[-N]`; the new path of the cache."""
    number = 1
    while True:
        aside = path.with_name(f"{path.name}.unusable" + (f"-{number}" if number > 1 else ""))
        if not any(_taken(aside.with_name(aside.name + c)) for c in COMPANIONS):
            break
        number += 1
    for companion in COMPANIONS:
        part = path.with_name(path.name + companion)
        if _taken(part):
            part.rename(aside.with_name(aside.name + companion))
    return aside


def _taken(path: Path) -> bool:
    return path.exists() or path.is_symlink()
