"""The vector cache: a rebuild embeds only new text, a failed build's work is kept, bad cache rows are recomputed."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import EmbedderError
from pipeline.settings import BuildSettings
from pipeline.store import open_store
from pipeline.store.build import build_index
from pipeline.store.embedders import HashEmbedder, Vectors
from pipeline.store.embedding import IncrementalEmbedding
from pipeline.store.vector_cache import CACHE_NAME, VectorCache, text_key

WORDS = "rent lease roof valuation tenant landlord parcel inspection offer title deed plumbing".split()


class CountingEmbedder:
    """HashEmbedder(32) that counts the texts it embeds and can fail after `fail_after` calls."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.inner = HashEmbedder(32)
        self.name, self.dim = self.inner.name, self.inner.dim
        self.texts: list[str] = []
        self.calls = 0
        self.fail_after = fail_after

    def __call__(self, texts: Sequence[str]) -> Vectors:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise EmbedderError("embedder stopped (a build killed halfway)")
        self.calls += 1
        self.texts.extend(texts)
        return self.inner(texts)


def _document(root: Path, i: int) -> None:
    body = " ".join(f"{WORDS[(i * 5 + j) % len(WORDS)]}{j}d{i}" for j in range(600))  # every chunk unique
    (root / f"doc{i:02d}.txt").write_text(f"Document {i}. {body}\f{body[::-1]}")


def _corpus(root: Path, count: int, first: int = 0) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(first, first + count):
        _document(root, i)
    return root


def _vectors(index: Path) -> tuple[list[str], np.ndarray]:
    """(chunk texts, their dense vectors) of the published index, in row order."""
    store = open_store(index, HashEmbedder(32))
    texts = [c.text for c in store.catalog.chunks(range(store.catalog.chunk_count))]
    vectors = np.load(index / store.manifest.generation / "chunks_dense" / "vectors.npy")
    return texts, vectors


SMALL_BATCHES = BuildSettings(embed_batch=8)


def test_adding_one_file_embeds_only_its_text(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", 6)
    first = CountingEmbedder()
    report = build_index(corpus, tmp_path / "index", first, settings=SMALL_BATCHES)
    assert report.embedded == len(set(first.texts)) == len(first.texts) > report.chunks
    _document(corpus, 6)
    second = CountingEmbedder()
    report = build_index(corpus, tmp_path / "index", second, settings=SMALL_BATCHES)
    store = open_store(tmp_path / "index", HashEmbedder(32))
    new = next(d for d in store.catalog.documents.values() if d.relpath == "doc06.txt")
    new_chunks = {c.text for c in store.catalog.chunks(store.catalog.rows_for_documents([new.document_id]).tolist())}
    # besides its chunks, the one text not seen before is the new document's search text (name, title, summary)
    assert set(second.texts) - new_chunks == {t for t in second.texts if t.startswith("doc06.txt\n")}
    assert len(second.texts) == len(new_chunks) + 1 == report.embedded
    # The same vectors as a build from nothing.
    build_index(corpus, tmp_path / "fresh", HashEmbedder(32))
    texts, vectors = _vectors(tmp_path / "index")
    fresh_texts, fresh_vectors = _vectors(tmp_path / "fresh")
    assert texts == fresh_texts
    np.testing.assert_array_equal(vectors, fresh_vectors)


def test_a_build_that_dies_halfway_keeps_what_it_embedded(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", 8)
    build_index(_corpus(tmp_path / "old", 1, first=50), tmp_path / "index", HashEmbedder(32))
    before = open_store(tmp_path / "index", HashEmbedder(32)).manifest.generation
    dying = CountingEmbedder(fail_after=5)
    with pytest.raises(EmbedderError, match="killed halfway"):
        build_index(corpus, tmp_path / "index", dying, settings=SMALL_BATCHES)
    assert open_store(tmp_path / "index", HashEmbedder(32)).manifest.generation == before
    assert dying.calls == 5 and 0 < len(dying.texts) <= 5 * 8  # five batches stored before it died
    resumed = CountingEmbedder()
    report = build_index(corpus, tmp_path / "index", resumed, settings=SMALL_BATCHES)
    assert not set(resumed.texts) & set(dying.texts)  # nothing embedded twice
    assert report.embedded == len(resumed.texts) == report.chunks + report.documents - len(dying.texts)
    build_index(corpus, tmp_path / "fresh", HashEmbedder(32))
    np.testing.assert_array_equal(_vectors(tmp_path / "index")[1], _vectors(tmp_path / "fresh")[1])


def test_bad_cache_rows_are_embedded_again(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", 3)
    build_index(corpus, tmp_path / "index", HashEmbedder(32))
    texts, vectors = _vectors(tmp_path / "index")
    with sqlite3.connect(tmp_path / "index" / CACHE_NAME) as db:
        db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (b"\x00" * 12, text_key(texts[0])))
        nan = np.full(32, np.nan, dtype="<f4").tobytes()
        db.execute("UPDATE vectors SET vector = ? WHERE key = ?", (nan, text_key(texts[1])))
    again = CountingEmbedder()
    build_index(corpus, tmp_path / "index", again)
    assert again.texts == sorted(texts[:2], key=len)
    np.testing.assert_array_equal(_vectors(tmp_path / "index")[1], vectors)


def test_an_unreadable_cache_file_is_replaced(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", 2)
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / CACHE_NAME).write_bytes(b"not a database at all" * 100)
    report = build_index(corpus, tmp_path / "index", HashEmbedder(32))
    assert report.embedded == report.chunks + report.documents
    assert VectorCache(tmp_path / "index" / CACHE_NAME, "hash-32", 32).get([text_key("x")]) == {}


def test_the_cache_keeps_only_the_published_generation_and_one_embedder(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus", 3)
    build_index(corpus, tmp_path / "index", HashEmbedder(32))
    (corpus / "doc02.txt").unlink()
    report = build_index(corpus, tmp_path / "index", HashEmbedder(32))
    with sqlite3.connect(tmp_path / "index" / CACHE_NAME) as db:
        (rows,) = db.execute("SELECT COUNT(*) FROM vectors WHERE embedder = 'hash-32/32'").fetchone()
    texts, _ = _vectors(tmp_path / "index")
    assert rows == len(set(texts)) + report.documents
    other = CountingEmbedder()
    other.name = "hash-32-other"  # another model of the same size shares no vector
    build_index(corpus, tmp_path / "index", other)
    assert len(other.texts) == len(set(texts)) + report.documents


def test_texts_are_embedded_once_in_length_sorted_batches() -> None:
    batches: list[list[str]] = []
    hashing = HashEmbedder(32)

    class Recording:
        name, dim = hashing.name, hashing.dim

        def __call__(self, texts: Sequence[str]) -> Vectors:
            batches.append(list(texts))
            return hashing(texts)

    texts = ["a b c d e", "a", "a b c", "a", "a b", "a b c d", "a b c d e f", "z"]
    progress: list[tuple[int, int]] = []
    with IncrementalEmbedding(Recording(), None, batch=3, progress=lambda d, t: progress.append((d, t))) as embedding:
        embedding.add(texts[:4])
        embedding.add(texts[4:])
        vectors = embedding.finish()
    assert sorted(t for b in batches for t in b) == sorted(set(texts))  # each distinct text once
    assert all(len(b) <= 3 and [len(t) for t in b] == sorted(len(t) for t in b) for b in batches)
    assert embedding.embedded == len(set(texts))
    assert progress[-1] == (len(texts), len(texts))
    np.testing.assert_array_equal(vectors, hashing(texts))


def test_an_embedding_failure_reaches_the_caller() -> None:
    with IncrementalEmbedding(CountingEmbedder(fail_after=0), None, batch=4) as embedding:
        embedding.add(["one text"])
        with pytest.raises(EmbedderError, match="killed halfway"):
            embedding.finish()
