"""Reference tests: BM25 against rank_bm25, faiss flat against numpy, fusion by hand."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from pipeline.retrieval import bm25
from pipeline.retrieval.bm25 import K1, B, BM25Builder, BM25Index
from pipeline.retrieval.dense import DenseIndex
from pipeline.retrieval.fusion import reciprocal_rank_fusion
from pipeline.retrieval.topk import top_k
from pipeline.text import bm25_tokens

CORPUS = [
    "The tenant shall pay rent monthly in advance",
    "The landlord shall repair the roof and the gutters",
    "Valuation of the property at Banda Lane by Knight Frank",
    "Offer letter for the purchase of Dik Dik Lane",
    "Inspection found a leaking roof and damaged plumbing",
    "Title deed L.R. NO: 2327/30 registered to the vendor",
    "Service charge is payable quarterly by the tenant",
    "Insurance of the building is the landlord's duty",
]


@pytest.mark.parametrize("query", ["roof repair", "tenant rent", "Banda Lane valuation", "2327/30", "unknownword"])
def test_bm25_scores_match_rank_bm25(query: str) -> None:
    tokens = [bm25_tokens(t) for t in CORPUS]
    ours = BM25Index.build_from_tokens(tokens).scores(query)
    reference = BM25Okapi(tokens, k1=K1, b=B).get_scores(bm25_tokens(query))
    np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-6)


def _streamed(tokens: list[list[str]]) -> BM25Index:
    builder = BM25Builder()
    for row in tokens:
        builder.add(row)
    return builder.build()


@pytest.mark.parametrize(
    "query", ["roof repair", "tenant rent", "Banda Lane valuation", "2327/30", "unknownword", "the"]
)
def test_bm25_built_row_by_row_equals_bm25s_and_rank_bm25(query: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # an empty row among them keeps its row id (and scores 0)
    tokens = [bm25_tokens(t) for t in [*CORPUS[:3], "", *CORPUS[3:], *CORPUS]]
    streamed, whole = _streamed(tokens), BM25Index.build_from_tokens(tokens)
    np.testing.assert_allclose(streamed.scores(query), whole.scores(query), rtol=1e-5, atol=1e-6)
    reference = BM25Okapi([t or ["\u2400"] for t in tokens], k1=K1, b=B).get_scores(bm25_tokens(query))
    np.testing.assert_allclose(streamed.scores(query), reference, rtol=1e-5, atol=1e-6)
    for term in bm25_tokens(query):
        assert streamed.rows_with(term).tolist() == whole.rows_with(term).tolist()
    streamed.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25", len(tokens))
    np.testing.assert_allclose(loaded.scores(query), whole.scores(query), rtol=1e-5, atol=1e-6)
    assert streamed.vocabulary_size == whole.vocabulary_size


@pytest.mark.parametrize("block", [7, 500, 16_384])
def test_bm25_built_row_by_row_on_a_larger_corpus_equals_bm25s(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25, "BUILD_ROWS", block)  # the matrix made in blocks of rows, as at scale
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(300)]
    tokens = [list(rng.choice(words, size=int(rng.integers(0, 60)))) for _ in range(2_000)]
    streamed, whole = _streamed(tokens), BM25Index.build_from_tokens(tokens)
    for query in ("w1 w2 w3", "w250 w7", "w0", "w299 w298 w1 w1"):
        np.testing.assert_allclose(streamed.scores(query), whole.scores(query), rtol=1e-5, atol=1e-6)
        for term in query.split():
            assert streamed.rows_with(term).tolist() == whole.rows_with(term).tolist()


def test_bm25_filtered_search_stays_inside_rows() -> None:
    index = BM25Index.build(CORPUS)
    rows, scores = index.search("the roof tenant landlord", k=3, rows=np.array([0, 6, 7], dtype=np.int64))
    assert set(rows.tolist()) <= {0, 6, 7}
    assert list(scores) == sorted(scores, reverse=True)


def test_bm25_save_load_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    index = BM25Index.build(CORPUS)
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25", len(CORPUS))
    np.testing.assert_allclose(loaded.scores("roof tenant"), index.scores("roof tenant"))


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_faiss_flat_equals_numpy_brute_force() -> None:
    rng = np.random.default_rng(7)
    vectors, query = _unit(rng, 500, 32), _unit(rng, 1, 32)[0]
    index = DenseIndex.build(vectors, "flat")
    rows, scores = index.search(query, k=10)
    expected = np.argsort(-(vectors @ query), kind="stable")[:10]
    assert rows.tolist() == expected.tolist()
    np.testing.assert_allclose(scores, (vectors @ query)[expected], rtol=1e-5)


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_dense_filtered_search_returns_k_inside_filter(kind: str) -> None:
    rng = np.random.default_rng(3)
    vectors, query = _unit(rng, 2000, 16), _unit(rng, 1, 16)[0]
    index = DenseIndex.build(vectors, kind)  # type: ignore[arg-type]
    allowed = np.arange(100, 160, dtype=np.int64)
    rows, _ = index.search(query, k=10, rows=allowed)
    assert len(rows) == 10 and set(rows.tolist()) <= set(allowed.tolist())
    expected = allowed[np.argsort(-(vectors[allowed] @ query), kind="stable")[:10]]
    assert rows.tolist() == expected.tolist()


def test_dense_save_load_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(5)
    vectors, query = _unit(rng, 50, 8), _unit(rng, 1, 8)[0]
    DenseIndex.build(vectors, "flat").save(tmp_path / "d")
    loaded = DenseIndex.load(tmp_path / "d", "flat")
    assert loaded.search(query, 5)[0].tolist() == DenseIndex.build(vectors, "flat").search(query, 5)[0].tolist()


def test_rrf_matches_hand_computed_values() -> None:
    fused = reciprocal_rank_fusion({"bm25": [3, 1, 2], "dense": [1, 4]}, k=60)
    # row 1: 1/62 + 1/61; row 3: 1/61; row 4: 1/62; row 2: 1/63
    assert [f.row for f in fused] == [1, 3, 4, 2]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1].score == pytest.approx(1 / 61)
    assert fused[0].ranks == {"bm25": 2, "dense": 1}


def test_rrf_ties_break_on_row_id_and_weights_apply() -> None:
    fused = reciprocal_rank_fusion({"a": [9, 5], "b": [5, 9]}, k=1)
    assert [f.row for f in fused] == [5, 9]  # equal scores 1/2 + 1/3: lower row first
    weighted = reciprocal_rank_fusion({"a": [9, 5], "b": [5, 9]}, k=1, weights={"a": 2.0, "b": 1.0})
    assert [f.row for f in weighted] == [9, 5]
    assert weighted[0].score == pytest.approx(2 / 2 + 1 / 3)


def test_top_k_tie_break_is_stable() -> None:
    rows, scores = top_k(np.array([1.0, 2.0, 2.0, 2.0, 0.5]), np.array([40, 30, 10, 20, 0]), 2)
    assert rows.tolist() == [10, 20] and scores.tolist() == [2.0, 2.0]
