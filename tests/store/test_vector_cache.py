"""A vector cache a build cannot use is set aside with a warning and a new one started; no build fails on it."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder
from pipeline.store.sqlite_cache import set_aside
from pipeline.store.vector_cache import CACHE_NAME, VectorCache, text_key


def _corpus(root: Path) -> Path:
    root.mkdir()
    (root / "lease.txt").write_text("The monthly rent is KSH 285,000, payable in advance by the tenant.")
    (root / "valuation.txt").write_text("The market value of the property is KSH 45,000,000 as at June 2023.")
    return root


def _build_twice(corpus: Path, index: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Two builds over whatever lies at the cache's place: both succeed; the first warns, the second embeds nothing."""
    with caplog.at_level(logging.WARNING, logger="pipeline.store.vector_cache"):
        first = build_index(corpus, index, HashEmbedder(32))
    assert first.embedded == first.chunks + first.documents
    assert any("is unusable" in r.getMessage() and CACHE_NAME in r.getMessage() for r in caplog.records)
    caplog.clear()
    second = build_index(corpus, index, HashEmbedder(32))
    assert second.embedded == 0  # the new cache serves the next build
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_directory_in_the_caches_place_is_set_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    index = tmp_path / "index"
    (index / CACHE_NAME).mkdir(parents=True)
    (index / CACHE_NAME / "notes.txt").write_text("kept")
    _build_twice(_corpus(tmp_path / "corpus"), index, caplog)
    assert (index / f"{CACHE_NAME}.unusable" / "notes.txt").read_text() == "kept"  # moved, never deleted
    assert (index / CACHE_NAME).is_file()


def test_an_sqlite_file_with_another_vectors_table_is_set_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index = tmp_path / "index"
    index.mkdir()
    with sqlite3.connect(index / CACHE_NAME) as db:
        db.execute("CREATE TABLE vectors (id INTEGER PRIMARY KEY, vector BLOB)")
        db.execute("INSERT INTO vectors VALUES (1, x'00')")
    db.close()
    _build_twice(_corpus(tmp_path / "corpus"), index, caplog)
    with sqlite3.connect(index / f"{CACHE_NAME}.unusable") as old:
        assert old.execute("SELECT id FROM vectors").fetchall() == [(1,)]
    old.close()


def test_a_directory_in_place_of_the_write_ahead_log_is_set_aside_with_the_cache(tmp_path: Path) -> None:
    path = tmp_path / CACHE_NAME
    VectorCache(path, "hash-32", 32).close()
    (tmp_path / f"{CACHE_NAME}-wal").mkdir()
    cache = VectorCache(path, "hash-32", 32)
    cache.put([text_key("x")], HashEmbedder(32)(["x"]))
    assert list(cache.get([text_key("x")])) == [text_key("x")]
    cache.close()
    assert (tmp_path / f"{CACHE_NAME}.unusable-wal").is_dir() and (tmp_path / f"{CACHE_NAME}.unusable").is_file()


def test_set_aside_never_overwrites_what_was_set_aside_before(tmp_path: Path) -> None:
    path = tmp_path / CACHE_NAME
    for number in range(3):
        path.write_text(f"broken {number}")
        set_aside(path)
    assert [(tmp_path / f"{CACHE_NAME}.unusable{suffix}").read_text() for suffix in ("", "-2", "-3")] == [
        "broken 0",
        "broken 1",
        "broken 2",
    ]
