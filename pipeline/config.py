"""One frozen settings object, read from an optional TOML file; env vars only at entry points."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.errors import ScopeRagError

DEFAULT_INDEX_DIR = Path(".scoperag/index")


class RetrievalSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    chunks_per_subquestion: int = Field(default=6, ge=1, le=50)
    documents_per_search: int = Field(default=8, ge=1, le=100)
    rrf_k: int = Field(default=60, ge=1)


class Settings(BaseModel):
    """Everything a run depends on; recorded beside every export and MLflow run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    index_dir: Path = DEFAULT_INDEX_DIR
    embed_threads: int = Field(default=1, ge=1, le=64)
    chunk_words: int = Field(default=120, ge=16, le=2000)
    chunk_overlap: int = Field(default=30, ge=0)
    retrieval: RetrievalSettings = RetrievalSettings()


def load_settings(path: Path | None) -> Settings:
    """Settings from `path` (TOML) or the defaults; a clear error names a bad file."""
    if path is None:
        return Settings()
    try:
        return Settings.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ScopeRagError(f"{path}: invalid settings: {exc}") from exc
