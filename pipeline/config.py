"""One frozen settings object; env vars are read only at entry points."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pipeline.core_config import CoreConfig

DEFAULT_INDEX_DIR = Path(".scoperag/index")
DEFAULT_HISTORY = Path(".scoperag/history.sqlite")
DEFAULT_PROFILES = Path(".scoperag/profiles")


class Settings(BaseModel):
    """Everything a run depends on; recorded beside every export and MLflow run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    index_dir: Path = DEFAULT_INDEX_DIR
    history: Path = DEFAULT_HISTORY
    lm_threads: int = Field(default=1, ge=1, le=64)
    core: CoreConfig = CoreConfig()
