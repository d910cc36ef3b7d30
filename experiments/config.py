"""Experiment configs: one TOML file per optimisation job, validated strictly (unknown keys are errors).

Relative paths in a config are relative to the working directory the job runs from (the
repository root for the shipped configs).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from optimizers.compile import CompileSpec
from optimizers.params import MODULES, PARAMS, ModuleName, OptimizerName, OptimizerParams
from pipeline.errors import ExperimentConfigError, ScopeRagError
from pipeline.evaluation.examples import CASES, Case, Split
from pipeline.evaluation.metrics import DEFAULT_WEIGHTS, WEIGHABLE
from pipeline.program.lm import parse_lm_spec
from pipeline.settings import DEFAULT_PARALLEL, ProgramSettings, Settings, available_cores
from pipeline.types import Strict

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
MAX_CONFIG_BYTES = 256 * 1024


class DataConfig(Strict):
    """Where the labelled traces and the index are, and how much of each split a job uses."""

    traces_dir: Path = Path("datasets/demo-traces")
    train_split: Split = "train"
    val_split: Split = "dev"
    train_size: int = Field(ge=1, le=10_000)
    val_size: int = Field(ge=1, le=10_000)
    cases: tuple[Case, ...] = CASES
    corpus_dir: Path = Path("datasets/demo")
    # The corpus manifest when it is not corpus_dir/corpus.toml (named in the index hint).
    corpus_manifest: Path | None = None
    index_dir: Path = Path(".scoperag/index")
    # After selection (never used for it): uncompiled vs compiled on this split, logged as test.*.
    test_split: Split | None = None
    test_size: int = Field(default=10_000, ge=1, le=10_000)
    # A stage job still reports the assembled program end to end on this many validation examples.
    end_to_end_size: int = Field(default=8, ge=0, le=10_000)
    # Fewer validation examples than this: the job warns before it starts (a verdict on a handful of
    # examples turns on single ones; the paired interval is then wide).
    min_val_size: int = Field(default=20, ge=1, le=10_000)

    @model_validator(mode="after")
    def _stratifiable(self) -> DataConfig:
        if not self.cases or len(set(self.cases)) != len(self.cases):
            raise ValueError(f"cases must be distinct and non-empty, got {list(self.cases)}")
        if self.train_split == self.val_split:
            raise ValueError(f"train_split and val_split are both {self.train_split!r}; validate on another split")
        if self.test_split in (self.train_split, self.val_split):
            raise ValueError(
                f"test_split {self.test_split!r} is also used for training or selection; name a third split"
            )
        for name in ("train_size", "val_size"):
            if getattr(self, name) < len(self.cases):
                raise ValueError(
                    f"{name} {getattr(self, name)} is below the {len(self.cases)} cases: every case must be represented"
                )
        return self


class LMConfig(Strict):
    """Which LMs a job uses: 'embedded', a LiteLLM model string, or an OpenAI-compatible base URL."""

    task: str = "embedded"
    teacher: str | None = None
    reflection: str | None = None
    threads: int = Field(default_factory=available_cores, ge=1, le=64, description="embedded model threads")
    num_threads: int = Field(
        default=DEFAULT_PARALLEL, ge=1, le=32, description="examples run in parallel (= embedded model slots)"
    )

    @field_validator("task", "teacher", "reflection")
    @classmethod
    def _known_spec(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_lm_spec(value)
            except ScopeRagError as exc:
                raise ValueError(str(exc)) from None
        return value


class MetricConfig(Strict):
    """Weights of the composite (safety gates are not weights) and the bar a bootstrapped demo must clear."""

    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    bootstrap_threshold: float = Field(default=0.5, ge=0.0, le=1.0)

    @field_validator("weights")
    @classmethod
    def _known_weights(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - set(WEIGHABLE))
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(unknown)}; weights can be set for {', '.join(WEIGHABLE)}")
        if any(w < 0 for w in weights.values()) or not any(w > 0 for w in weights.values()):
            raise ValueError("weights must be >= 0 with at least one > 0")
        return weights


class BudgetConfig(Strict):
    """The most LM calls the compile step may make (cache hits included); the job stops cleanly there."""

    max_lm_calls: int = Field(ge=1, le=1_000_000)


class TrackingConfig(Strict):
    """The MLflow experiment runs are logged to, and whether DSPy traces are autologged."""

    experiment: str = Field(default="scoperag", pattern=NAME_PATTERN)
    dspy_autolog: bool = False


class ExperimentConfig(Strict):
    """One optimisation job."""

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field(default="", max_length=2000)
    optimizer: OptimizerName
    # What is compiled and scored: the whole program, or one learned step against its own metric.
    stage: Literal["end_to_end", "decompose", "score", "answer"] = "end_to_end"
    modules: tuple[ModuleName, ...]
    seed: int = Field(default=0, ge=0, le=2**31 - 1)
    data: DataConfig
    lm: LMConfig = LMConfig()
    metric: MetricConfig = MetricConfig()
    budget: BudgetConfig
    tracking: TrackingConfig = TrackingConfig()
    optimizer_params: OptimizerParams
    # The program's own settings (e.g. which steps run their floor); recorded in the export.
    program: ProgramSettings = ProgramSettings()
    # Keep the uncompiled program unless the candidate's validation composite is higher.
    require_improvement: bool = True

    @model_validator(mode="before")
    @classmethod
    def _tag_params(cls, data: Any) -> Any:
        # The [optimizer_params] table has no `kind`: the optimizer names which model validates it.
        if isinstance(data, dict) and isinstance(data.get("optimizer"), str) and data["optimizer"] in PARAMS:
            raw = data.get("optimizer_params", {})
            if isinstance(raw, dict) and "kind" not in raw:
                data = {**data, "optimizer_params": {**raw, "kind": data["optimizer"]}}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ExperimentConfig:
        if not self.modules or len(set(self.modules)) != len(self.modules):
            raise ValueError(f"modules must be distinct and non-empty, a subset of {', '.join(MODULES)}")
        if self.stage != "end_to_end" and self.modules != (self.stage_module,):
            raise ValueError(
                f"a {self.stage} stage job compiles that module only: set modules = [{self.stage_module!r}] "
                f"(got {list(self.modules)})"
            )
        if self.optimizer == "gepa" and self.lm.teacher is not None:
            raise ValueError("GEPA takes no teacher LM; set lm.reflection for the model that proposes instructions")
        if self.optimizer != "gepa" and self.lm.reflection is not None:
            raise ValueError(
                f"lm.reflection is used by GEPA only, not by {self.optimizer}; remove it or use lm.teacher"
            )
        return self

    @property
    def stage_module(self) -> str:
        """The predictor a stage job compiles: the stage's own."""
        return self.stage

    def settings(self) -> Settings:
        """The settings the job's program runs with."""
        return Settings(index_dir=self.data.index_dir, lm_threads=self.lm.threads, program=self.program)

    def compile_spec(
        self, *, teacher_lm: Any = None, reflection_lm: Any = None, log_dir: Path | None = None
    ) -> CompileSpec:
        """The optimizer's view of this config (LMs are made by the caller)."""
        return CompileSpec(
            params=self.optimizer_params,
            modules=tuple(self.modules),
            seed=self.seed,
            weights=dict(self.metric.weights),
            bootstrap_threshold=self.metric.bootstrap_threshold,
            num_threads=self.lm.num_threads,
            teacher_lm=teacher_lm,
            reflection_lm=reflection_lm,
            log_dir=log_dir,
        )


def load_config(path: Path) -> ExperimentConfig:
    """The validated config in `path`; ExperimentConfigError naming the file, the field and the problem."""
    path = Path(path)
    file = str(path)
    if not path.is_file():
        raise ExperimentConfigError(file, "no such file; the shipped configs are experiments/*.toml")
    raw = path.read_bytes()
    if len(raw) > MAX_CONFIG_BYTES:
        raise ExperimentConfigError(file, f"is {len(raw)} bytes, over the {MAX_CONFIG_BYTES}-byte limit")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ExperimentConfigError(file, f"is not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentConfigError(file, f"is not valid TOML: {exc}") from None
    return parse_config(data, file)


def parse_config(data: dict[str, Any], file: str = "<config>") -> ExperimentConfig:
    """`data` (a parsed TOML document) validated; ExperimentConfigError naming the first bad fields."""
    try:
        return ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        fields = []
        for error in exc.errors()[:5]:
            # Drop the discriminator step pydantic inserts ("optimizer_params.gepa.max_metric_calls").
            loc = [str(p) for p in error["loc"] if not (error["loc"][:1] == ("optimizer_params",) and p in PARAMS)]
            where = ".".join(loc) or "(top level)"
            fields.append(where)
            message = (
                "unknown key (not a field of this section)" if error["type"] == "extra_forbidden" else error["msg"]
            )
            problems.append(f"{where}: {message}")
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        config_error = ExperimentConfigError(file, "; ".join(problems) + more)
        config_error.field = fields[0] if fields else ""
        raise config_error from None


def config_hash(config: ExperimentConfig) -> str:
    """sha256 of the config's canonical JSON: the same job, the same hash."""
    payload = json.dumps(config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """Nested config values as dotted keys -> strings (lists as JSON), e.g. {'lm.task': 'embedded'}."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list | tuple):
        out[prefix] = json.dumps(list(value))
    else:
        out[prefix] = "" if value is None else str(value)
    return out
