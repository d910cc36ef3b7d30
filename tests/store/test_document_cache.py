"""The document cache: a rebuild reads only changed or new files and gives the index a fresh build gives;
rows that fail their checks and unusable cache files are derived again."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from pipeline.errors import InputFileError
from pipeline.store import open_store
from pipeline.store import reading as reading_module
from pipeline.store.build import build_index
from pipeline.store.document_cache import CACHE_NAME, DocumentCache
from pipeline.store.embedders import HashEmbedder
from pipeline.store.reading import SourceFile, read_sources

WORDS = "rent lease roof valuation tenant landlord parcel inspection offer title deed plumbing".split()


def _write(root: Path, i: int, extra: str = "") -> None:
    body = " ".join(f"{WORDS[(i * 3 + j) % len(WORDS)]}{j}" for j in range(300))
    (root / f"doc{i}.txt").write_text(f"Document {i} of Acme Widgets Inc. {extra}\f{body}\f{body[::-1]}")


class CountingReader:
    """read_sources that records which files it was asked to read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def __call__(self, files: Sequence[tuple[Path, str]], workers: int) -> Iterator[SourceFile | InputFileError]:
        self.read.extend(rel for _, rel in files)
        return read_sources(files, workers)


def _index_state(index: Path) -> tuple[object, ...]:
    store = open_store(index, HashEmbedder(32))
    chunks = store.catalog.chunks(range(store.catalog.chunk_count))
    documents = [(d.relpath, d.title, d.summary, d.page_count) for d in store.catalog.documents.values()]
    return documents, [(c.document_id, c.page, c.text) for c in chunks], store.catalog.vocabulary


def test_a_rebuild_reads_only_new_or_changed_files_and_gives_the_same_index(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    for i in range(4):
        _write(source, i)
    first = CountingReader()
    report = build_index(source, tmp_path / "index", HashEmbedder(32), reader=first)
    assert sorted(first.read) == ["doc0.txt", "doc1.txt", "doc2.txt", "doc3.txt"] and report.reused == 0

    _write(source, 4)
    _write(source, 1, extra="Amended.")
    again = CountingReader()
    report = build_index(source, tmp_path / "index", HashEmbedder(32), reader=again)
    assert sorted(again.read) == ["doc1.txt", "doc4.txt"] and report.reused == 3

    fresh = tmp_path / "fresh"
    build_index(source, fresh, HashEmbedder(32))
    assert _index_state(tmp_path / "index") == _index_state(fresh)
    # After publishing, the cache holds the five files of the new generation and nothing older.
    with sqlite3.connect(tmp_path / "index" / CACHE_NAME) as db:
        assert db.execute("SELECT COUNT(*) FROM documents").fetchone() == (5,)


def test_a_damaged_row_is_read_again(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    for i in range(3):
        _write(source, i)
    build_index(source, tmp_path / "index", HashEmbedder(32))
    with sqlite3.connect(tmp_path / "index" / CACHE_NAME) as db:
        key = db.execute("SELECT key FROM documents ORDER BY key LIMIT 1").fetchone()[0]
        db.execute("UPDATE documents SET payload = ? WHERE key = ?", (b"not zlib", key))
    assert DocumentCache(tmp_path / "index" / CACHE_NAME).get(key) is None
    report = build_index(source, tmp_path / "index", HashEmbedder(32))
    assert report.reused == 2 and report.documents == 3


def test_an_unusable_cache_file_is_replaced(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    _write(source, 0)
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / CACHE_NAME).write_bytes(b"this is no sqlite database" * 100)
    report = build_index(source, tmp_path / "index", HashEmbedder(32))
    assert report.documents == 1 and report.reused == 0
    assert build_index(source, tmp_path / "index", HashEmbedder(32)).reused == 1


def test_other_settings_or_owners_derive_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    _write(source, 0)
    build_index(source, tmp_path / "index", HashEmbedder(32))
    (source / "corpus.toml").write_text(
        'format = "scoperag-corpus/v1"\nname = "corpus"\n'
        '[[entities]]\nslug = "acme"\nname = "Acme Widgets Inc."\n'
        '[[documents]]\npath = "doc0.txt"\nentities = ["acme"]\n'
    )
    calls: list[str] = []
    real = reading_module.read_or_error

    def counting(path: Path, relpath: str) -> SourceFile | InputFileError:
        calls.append(relpath)
        return real(path, relpath)

    monkeypatch.setattr(reading_module, "read_or_error", counting)
    assert build_index(source, tmp_path / "index", HashEmbedder(32)).reused == 0
    assert calls == ["doc0.txt"]


def test_an_amendment_derives_again_when_the_owners_of_what_it_amends_change(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    _write(source, 0)
    _write(source, 1, "Amendment No. 1")

    def manifest(owner: str) -> None:
        (source / "corpus.toml").write_text(
            'format = "scoperag-corpus/v1"\nname = "corpus"\n'
            '[[entities]]\nslug = "acme"\nname = "Acme Widgets Inc."\n'
            '[[entities]]\nslug = "bolt"\nname = "Bolt Fasteners Ltd"\n'
            f'[[documents]]\npath = "doc0.txt"\nentities = ["{owner}"]\n'
            '[[documents]]\npath = "doc1.txt"\namends = "doc0.txt"\n'
        )

    manifest("acme")
    build_index(source, tmp_path / "index", HashEmbedder(32))
    manifest("bolt")  # the amendment's file is unchanged; its owners (the amended agreement's) are not
    assert build_index(source, tmp_path / "index", HashEmbedder(32)).reused == 0


def test_a_cache_that_cannot_be_used_is_set_aside_and_nothing_in_its_place_is_deleted(tmp_path: Path) -> None:
    source = tmp_path / "corpus"
    source.mkdir()
    _write(source, 0)
    index = tmp_path / "index"
    (index / CACHE_NAME).mkdir(parents=True)  # a directory where the cache file belongs
    (index / CACHE_NAME / "kept.txt").write_text("someone's file")
    assert build_index(source, index, HashEmbedder(32)).documents == 1
    assert (index / f"{CACHE_NAME}.unusable" / "kept.txt").read_text() == "someone's file"
    assert build_index(source, index, HashEmbedder(32)).reused == 1  # the new cache works
