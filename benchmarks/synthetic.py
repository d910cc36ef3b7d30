"""Deterministic synthetic corpora for the retrieval benchmark: Zipf text, clustered vectors.

Text: a vocabulary of pronounceable pseudo-words drawn with Zipf frequencies, plus a few
topic words per document so that BM25 has something to find. Vectors: unit vectors around
a fixed number of gaussian cluster centres (a document sits near a mixture of a few centres,
its chunks near the document), because uniform random vectors have no neighbourhood
structure and make every approximate index look broken, while a single tight cluster per
document makes every approximate index look perfect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.text import STOPWORDS

Vectors = npt.NDArray[np.float32]

SEED = 20240601
FILTER_DOCUMENTS = 50  # documents in the filter of each query

CONSONANTS = "bcdfghjklmnprstvz"
VOWELS = "aeiou"
ZIPF_EXPONENT = 1.07
TOPIC_WORDS_PER_DOCUMENT = 10
TOPIC_SHARE = 0.2  # fraction of a chunk's words drawn from its document's topic words
# A document vector mixes a few cluster centres (Dirichlet weights), so a query's similarities
# decay smoothly past its first neighbours (median cosine at 100k chunks: top-1 ~0.7,
# top-10 ~0.4, top-100 ~0.2) instead of dropping off a cliff after its own document.
TOPICS_PER_DOCUMENT = 3
DOCUMENT_SPREAD = 0.04  # per-dimension gaussian noise: document around its centre mixture
CHUNK_SPREAD = 0.06  # ... chunk around its document
QUERY_SPREAD = 0.05  # ... query vector around the chunk it was drawn from
BLOCK_ROWS = 65_536


@dataclass(frozen=True)
class CorpusShape:
    """How big the synthetic corpus is and how it is shaped."""

    chunks: int
    dim: int = 384
    vocabulary: int = 20_000
    words_per_chunk: tuple[int, int] = (80, 120)  # inclusive range, mean 100
    chunks_per_document: tuple[int, int] = (10, 30)  # inclusive range, mean 20
    clusters: int = 1_000


@dataclass(frozen=True)
class SyntheticCorpus:
    """Chunk texts and unit vectors, grouped into documents by `document_starts`."""

    texts: list[str]
    vectors: Vectors
    document_vectors: Vectors
    # row where each document starts, followed by the total number of rows
    document_starts: npt.NDArray[np.int64]

    @property
    def documents(self) -> int:
        return len(self.document_starts) - 1


@dataclass(frozen=True)
class QuerySet:
    """Queries drawn from chunks: a few of the chunk's words and its perturbed vector."""

    texts: list[str]
    vectors: Vectors
    source_rows: npt.NDArray[np.int64]
    # per query: document positions of a filter holding the source document plus random others
    filters: list[npt.NDArray[np.int64]]


def normalise_rows(matrix: npt.NDArray[np.float32]) -> Vectors:
    """Rows scaled to unit L2 norm, in place."""
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """`size` distinct pseudo-words of two to four consonant-vowel syllables, no stopwords."""
    syllables = [c + v for c in CONSONANTS for v in VOWELS]
    words: dict[str, None] = {}
    while len(words) < size:
        count = int(rng.integers(2, 5))
        word = "".join(syllables[i] for i in rng.integers(0, len(syllables), count))
        if word not in STOPWORDS:
            words[word] = None
    return list(words)


def document_lengths(shape: CorpusShape, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """Chunks per document, summing to exactly `shape.chunks` (the last one is cut short)."""
    low, high = shape.chunks_per_document
    lengths = rng.integers(low, high + 1, size=shape.chunks // low + 1)
    ends = np.cumsum(lengths)
    count = int(np.searchsorted(ends, shape.chunks)) + 1
    lengths = lengths[:count].copy()
    lengths[-1] -= int(ends[count - 1]) - shape.chunks
    return lengths.astype(np.int64)


def chunk_texts(
    shape: CorpusShape, lengths: npt.NDArray[np.int64], words: list[str], rng: np.random.Generator
) -> list[str]:
    """Zipf-distributed words, a share of them replaced by the document's topic words."""
    ranks = np.arange(1, len(words) + 1, dtype=np.float64)
    cdf = np.cumsum(ranks**-ZIPF_EXPONENT)
    cdf /= cdf[-1]
    topics = rng.integers(200, len(words), size=(len(lengths), TOPIC_WORDS_PER_DOCUMENT))
    chunk_document = np.repeat(np.arange(len(lengths)), lengths)
    low, high = shape.words_per_chunk
    texts: list[str] = []
    for start in range(0, shape.chunks, BLOCK_ROWS):
        documents = chunk_document[start : start + BLOCK_ROWS]
        sizes = rng.integers(low, high + 1, size=len(documents))
        token_document = np.repeat(documents, sizes)
        ids = np.minimum(np.searchsorted(cdf, rng.random(len(token_document))), len(words) - 1)
        topical = rng.random(len(ids)) < TOPIC_SHARE
        picks = rng.integers(0, TOPIC_WORDS_PER_DOCUMENT, size=int(topical.sum()))
        ids[topical] = topics[token_document[topical], picks]
        flat = ids.tolist()
        offset = 0
        for size in sizes.tolist():
            texts.append(" ".join([words[i] for i in flat[offset : offset + size]]))
            offset += size
    return texts


def clustered_vectors(
    shape: CorpusShape, lengths: npt.NDArray[np.int64], rng: np.random.Generator
) -> tuple[Vectors, Vectors]:
    """(chunk vectors, document vectors): unit rows around mixtures of gaussian cluster centres."""
    centres = normalise_rows(rng.standard_normal((shape.clusters, shape.dim), dtype=np.float32))
    topics = rng.integers(0, shape.clusters, size=(len(lengths), TOPICS_PER_DOCUMENT))
    weights = rng.dirichlet(np.ones(TOPICS_PER_DOCUMENT), size=len(lengths)).astype(np.float32)
    documents = normalise_rows(np.einsum("dt,dtk->dk", weights, centres[topics]))
    documents += DOCUMENT_SPREAD * rng.standard_normal(documents.shape, dtype=np.float32)
    chunk_document = np.repeat(np.arange(len(lengths)), lengths)
    chunks = np.empty((shape.chunks, shape.dim), dtype=np.float32)
    for start in range(0, shape.chunks, BLOCK_ROWS):
        block = documents[chunk_document[start : start + BLOCK_ROWS]]
        block += CHUNK_SPREAD * rng.standard_normal(block.shape, dtype=np.float32)
        chunks[start : start + len(block)] = normalise_rows(block)
    return chunks, normalise_rows(documents)


def make_corpus(shape: CorpusShape, seed: int) -> SyntheticCorpus:
    """The corpus for `shape`; the same seed gives the same texts and vectors."""
    text_rng, vector_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    lengths = document_lengths(shape, text_rng)
    words = vocabulary(shape.vocabulary, text_rng)
    texts = chunk_texts(shape, lengths, words, text_rng)
    vectors, document_vectors = clustered_vectors(shape, lengths, vector_rng)
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return SyntheticCorpus(texts, vectors, document_vectors, starts)


def make_queries(
    corpus: SyntheticCorpus,
    count: int,
    filter_documents: int,
    seed: int,
    words_per_query: tuple[int, int] = (2, 5),
) -> QuerySet:
    """`count` queries: 2-5 distinct words of a random chunk and its vector plus noise, unique texts."""
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(corpus.texts), size=count, replace=False).astype(np.int64)
    texts: list[str] = []
    for row in rows.tolist():
        distinct = sorted(set(corpus.texts[row].split()))
        text = ""
        while not text or text in texts:  # query texts key the precomputed vectors: keep them unique
            size = min(int(rng.integers(words_per_query[0], words_per_query[1] + 1)), len(distinct))
            text = " ".join(rng.choice(distinct, size=size, replace=False).tolist())
        texts.append(text)
    vectors = corpus.vectors[rows] + QUERY_SPREAD * rng.standard_normal(
        (count, corpus.vectors.shape[1]), dtype=np.float32
    )
    sources = np.searchsorted(corpus.document_starts, rows, side="right") - 1
    filters = [filter_around(int(source), corpus.documents, filter_documents, rng) for source in sources.tolist()]
    return QuerySet(texts, normalise_rows(vectors), rows, filters)


def filter_around(source: int, documents: int, size: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """Sorted document positions: `source` plus `size - 1` other random documents."""
    size = min(size, documents)
    others = rng.choice(documents - 1, size=size - 1, replace=False)
    others[others >= source] += 1  # skip the source document itself
    return np.sort(np.concatenate([[source], others])).astype(np.int64)


def filter_rows(corpus: SyntheticCorpus, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Sorted chunk rows of the documents at `positions`."""
    starts, ends = corpus.document_starts[positions], corpus.document_starts[positions + 1]
    return np.concatenate([np.arange(s, e, dtype=np.int64) for s, e in zip(starts, ends, strict=True)])
