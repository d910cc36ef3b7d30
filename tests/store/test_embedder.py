"""The static embedder: the package's own encoder as reference, offline loading, the safetensors reader."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import EmbedderError
from pipeline.store.embedders import StaticEmbedder, embedder_by_name, read_safetensors

TEXTS = [
    "Total net sales increased 8% to $117.2 billion during the first quarter of 2023.",
    "The tenant shall pay KSH 120,000 per month for 14 Banda Lane.",
    "naïve café ☐ 2023",
    "",
]


def test_static_vectors_equal_the_packages_own_encoder() -> None:
    from static_model import get_embeddings  # the package's native encoder: the reference

    ours = StaticEmbedder()(TEXTS)
    reference = np.array(get_embeddings(TEXTS[:3]), dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    assert ours.shape == (4, 64) and ours.dtype == np.float32
    np.testing.assert_allclose(ours[:3], reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours[:3], axis=1), 1.0, rtol=1e-5)
    assert not ours[3].any()  # no token, no direction


def test_static_embedder_is_found_by_its_manifest_name_and_ranks_by_meaning() -> None:
    embedder = embedder_by_name(StaticEmbedder.name)
    query, near, far = embedder(["quarterly revenue growth", "net sales increased this quarter", "the roof leaks"])
    assert float(query @ near) > float(query @ far)


def test_safetensors_reader_refuses_extents_that_disagree_with_shapes(tmp_path: Path) -> None:
    header = json.dumps({"x": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 12]}}).encode()
    path = tmp_path / "bad.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\x00" * 12)
    with pytest.raises(EmbedderError, match="not a valid safetensors file"):
        read_safetensors(path)
    header = json.dumps({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}}).encode()
    path.write_bytes(len(header).to_bytes(8, "little") + header + np.arange(3, dtype="<f4").tobytes())
    np.testing.assert_array_equal(read_safetensors(path)["x"], [0.0, 1.0, 2.0])


def test_a_pool_of_worker_processes_gives_the_vectors_in_order() -> None:
    from pipeline.store.embedder_pool import EmbedderPool
    from pipeline.store.embedders import HashEmbedder

    texts = [f"clause {i} rent tenant {'roof ' * (i % 7)}" for i in range(37)]
    with EmbedderPool("hash-32", 32, workers=2) as pool:
        np.testing.assert_array_equal(pool(texts), HashEmbedder(32)(texts))
        np.testing.assert_array_equal(pool(texts[:1]), HashEmbedder(32)(texts[:1]))
        assert pool([]).shape == (0, 32)


def test_a_pool_refuses_an_unknown_model_when_it_starts() -> None:
    from pipeline.store.embedder_pool import EmbedderPool

    with pytest.raises(EmbedderError, match="unknown embedder 'no-such-model'"):
        EmbedderPool("no-such-model", 8, workers=2)


def test_a_static_embedder_gives_the_same_vectors_before_and_after_it_builds_its_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pipeline.store import embedders

    monkeypatch.setattr(embedders, "TABLE_AFTER_TOKENS", 60)
    embedder = StaticEmbedder()
    gathered = embedder(TEXTS[:1])  # a question's few tokens: rows gathered, no table built
    assert embedder._table is None
    embedder(TEXTS * 4)
    assert embedder._table is not None  # an index build's many: the table, built once
    np.testing.assert_array_equal(embedder(TEXTS[:1]), gathered)
