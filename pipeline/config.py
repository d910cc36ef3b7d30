"""One frozen settings object, read from an optional TOML file; env vars only at entry points."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.core_config import CoreConfig
from pipeline.errors import ScopeRagError

DEFAULT_INDEX_DIR = Path(".scoperag/index")
DEFAULT_HISTORY = Path(".scoperag/history.sqlite")
DEFAULT_PROFILES = Path(".scoperag/profiles")


class Settings(BaseModel):
    """Everything a run depends on; recorded beside every export and MLflow run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    index_dir: Path = DEFAULT_INDEX_DIR
    history: Path = DEFAULT_HISTORY
    embed_threads: int = Field(default=1, ge=1, le=64)
    lm_threads: int = Field(default=1, ge=1, le=64)
    relevance_threshold: float = Field(default=5.0, ge=0, le=10)
    core: CoreConfig = CoreConfig()


def load_settings(path: Path | None) -> Settings:
    """Settings from `path` (TOML) or the defaults; a clear error names a bad file."""
    if path is None:
        return Settings()
    try:
        return Settings.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        raise ScopeRagError(f"{path}: invalid settings: {exc}") from exc
