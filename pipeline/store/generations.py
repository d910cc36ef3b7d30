"""Index generations: built in a scratch directory, published by renaming the manifest.

A build writes every file into `.building-*`, fsyncs it, renames the directory to its
generation name and only then replaces `MANIFEST.json` atomically. A build killed at any
point therefore leaves the previous manifest pointing at the previous, complete generation.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from pipeline.errors import IndexBusyError, IndexCorruptError, IndexNotFoundError, LockHeld
from pipeline.files import exclusive_lock, fsync_path, sha256_file, write_file_atomic
from pipeline.types import Strict

MANIFEST_NAME = "MANIFEST.json"
INDEX_FORMAT: Literal["scoperag-index/v1"] = "scoperag-index/v1"


class FileRecord(Strict):
    size: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class IndexManifest(Strict):
    """What a published generation holds; written last, read first."""

    format: Literal["scoperag-index/v1"]
    generation: str = Field(pattern=r"^gen-[0-9]{8}T[0-9]{6}-[0-9a-f]{8}$")
    created_at: str
    corpus: str
    embedder: str
    embedding_dim: int = Field(gt=0)
    dense_kind: Literal["flat", "hnsw"]
    counts: dict[str, int]
    settings: dict[str, int | str]
    files: dict[str, FileRecord]
    # The folder the index was built from (absolute); None for an index built before it was recorded.
    source: str | None = None


LOCK_NAME = ".build.lock"


@contextlib.contextmanager
def build_lock(index_dir: Path) -> Iterator[None]:
    """Hold the index directory's build lock: one writer at a time (released even by SIGKILL).

    A second build would delete the first's scratch directory and, on publishing, its new
    generation; it is refused with IndexBusyError instead.
    """
    try:
        with exclusive_lock(index_dir / LOCK_NAME, wait=False):
            yield
    except LockHeld as exc:
        raise IndexBusyError(str(index_dir), exc.holder) from None


def new_scratch_dir(index_dir: Path) -> Path:
    """A fresh `.building-*` directory; stale ones from killed builds are removed first.

    Call it under `build_lock`: any other `.building-*` then belongs to a dead build."""
    index_dir.mkdir(parents=True, exist_ok=True)
    for stale in index_dir.glob(".building-*"):
        shutil.rmtree(stale, ignore_errors=True)
    scratch = index_dir / f".building-{secrets.token_hex(4)}"
    scratch.mkdir()
    return scratch


def publish_generation(index_dir: Path, scratch: Path, fields: dict[str, object]) -> IndexManifest:
    """Seal `scratch` as a new generation and point the manifest at it (atomic)."""
    files: dict[str, FileRecord] = {}
    for path in sorted(p for p in scratch.rglob("*") if p.is_file()):
        fsync_path(path)
        files[path.relative_to(scratch).as_posix()] = FileRecord(size=path.stat().st_size, sha256=sha256_file(path))
    now = datetime.now(UTC)
    generation = f"gen-{now:%Y%m%dT%H%M%S}-{secrets.token_hex(4)}"
    manifest = IndexManifest(
        format=INDEX_FORMAT,
        generation=generation,
        created_at=now.isoformat(),
        files=files,
        **fields,  # type: ignore[arg-type]
    )
    final = index_dir / generation
    scratch.rename(final)
    fsync_path(index_dir)
    write_file_atomic(index_dir / MANIFEST_NAME, manifest.model_dump_json(indent=2).encode("utf-8"))
    _remove_unpublished(index_dir, keep=generation)
    return manifest


def _remove_unpublished(index_dir: Path, keep: str) -> None:
    """Delete generations other than `keep` (open readers keep their mapped files on POSIX)."""
    for old in index_dir.glob("gen-*"):
        if old.name != keep and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    for tmp in index_dir.glob(f".{MANIFEST_NAME}.tmp-*"):
        with contextlib.suppress(OSError):
            tmp.unlink()


def read_manifest(index_dir: Path) -> IndexManifest:
    """The published manifest; IndexNotFoundError or IndexCorruptError when unusable."""
    path = index_dir / MANIFEST_NAME
    if not path.is_file():
        raise IndexNotFoundError(str(index_dir))
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return IndexManifest.model_validate(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as exc:
        raise IndexCorruptError(str(index_dir), [f"{MANIFEST_NAME} is invalid: {exc}"]) from exc


def open_generation(index_dir: Path, verify_hashes: bool = False) -> tuple[IndexManifest, Path]:
    """(manifest, generation directory) after checking every listed file exists with its size."""
    manifest = read_manifest(index_dir)
    root = index_dir / manifest.generation
    problems: list[str] = []
    if not root.is_dir():
        problems.append(f"generation directory {manifest.generation} is missing")
    else:
        for name, record in manifest.files.items():
            path = root / name
            if not path.is_file():
                problems.append(f"{name} is missing")
            elif path.stat().st_size != record.size:
                problems.append(f"{name} has {path.stat().st_size} bytes, manifest says {record.size}")
            elif verify_hashes and sha256_file(path) != record.sha256:
                problems.append(f"{name} does not match its sha256")
    if problems:
        raise IndexCorruptError(str(index_dir), problems)
    return manifest, root
