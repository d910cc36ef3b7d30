"""The `scoperag-program/v3` schemas: manifest.json and each predictor's state in program.json.

v3 answers with answer lines (`answer` is AnswerLines, `compute` names a computed figure's operands) and
records which way each step runs (`config.program.steps`). `judge` (JudgeClaim) and `choose` (ChooseAnswer)
came later and are optional: an export without one loads with its own uncompiled state, its step on its floor
unless the settings say otherwise. Exports of v1 and v2, whose `answer` wrote or chose bullets, are refused with
the way out: run the job again and export it with this version.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

import dspy
from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints, ValidationError, field_validator

from pipeline.errors import ExportError
from pipeline.export.jsonio import is_forbidden_key
from pipeline.export.record import Scores
from pipeline.types import StrictJson
from signatures import AnswerLines, ChooseAnswer, ComputeFigure, Decompose, HyDE, JudgeClaim, ScoreRelevance

FORMAT = "scoperag-program/v3"
FORMATS = (FORMAT,)
FORMAT_FAMILY = "scoperag-program/"
MANIFEST = "manifest.json"
PROGRAM = "program.json"
PROMPTS = "prompts.md"
# The predictors of ScopedQA, in the order prompts.md lists them.
PREDICTORS: dict[str, type[dspy.Signature]] = {
    "decompose": Decompose,
    "score": ScoreRelevance,
    "answer": AnswerLines,
    "hyde": HyDE,
    "compute": ComputeFigure,
    "judge": JudgeClaim,
    "choose": ChooseAnswer,
}
# The predictors each format version carries, and those an export of it may leave out (exports written before
# they existed still load).
FORMAT_PREDICTORS: dict[str, tuple[str, ...]] = {FORMAT: tuple(PREDICTORS)}
OPTIONAL_PREDICTORS: frozenset[str] = frozenset({"judge", "choose"})
METADATA = "metadata"

M = TypeVar("M", bound=BaseModel)

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class FileEntry(StrictJson):
    """Hash and size of one file of the export."""

    sha256: Sha256
    size: int = Field(ge=0, le=2**31)


class ExportFiles(StrictJson):
    """The two files the manifest vouches for."""

    model_config = ConfigDict(populate_by_name=True)
    program: FileEntry = Field(alias="program.json")
    prompts: FileEntry = Field(alias="prompts.md")


class Versions(StrictJson):
    """What produced the export (informational; the LM is never configured from it)."""

    scoperag: ShortText
    dspy: ShortText
    python: ShortText
    lm: ShortText | None = None


class ExportConfig(StrictJson):
    """The full configuration the program was compiled under, as recorded: the settings without their program
    section (an export written before it was left out holds one, which nothing reads), the program's own
    settings, recorded once and the ones it runs, and the job. Each section is also held to its own schema
    (`validate.validate_manifest`): Settings, ProgramSettings and the ExperimentRecord."""

    settings: dict[str, JsonValue]
    program: dict[str, JsonValue]
    experiment: dict[str, JsonValue]


class ExportManifest(StrictJson):
    """manifest.json: provenance, config, scores and the hashes of program.json and prompts.md."""

    format: Literal["scoperag-program/v3"]
    created_at: str
    versions: Versions
    config: ExportConfig
    trainset_hash: ShortText
    scores: Scores
    run_id: ShortText | None = None
    files: ExportFiles

    @field_validator("created_at")
    @classmethod
    def _aware_iso_time(cls, value: str) -> str:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError("created_at must be an ISO 8601 time") from exc
        if parsed.tzinfo is None:
            raise ValueError("created_at must carry a UTC offset")
        return value


class FieldState(StrictJson):
    """One signature field as DSPy saves it."""

    prefix: str
    description: str


class SignatureState(StrictJson):
    """A predictor's instruction and its fields' prefixes and descriptions."""

    instructions: str
    fields: list[FieldState]


class PredictorState(StrictJson):
    """One dspy.Predict's saved state; `lm` must be null (no LM override travels with a program). DSPy saves
    `traces` and `train` empty; each demo is checked against the predictor's signature (`demos.demo_problems`)."""

    traces: list[JsonValue] = Field(max_length=0)
    train: list[JsonValue] = Field(max_length=0)
    demos: list[dict[str, JsonValue]] = Field(max_length=100)
    signature: SignatureState
    lm: None = None


class DependencyVersions(StrictJson):
    """The versions DSPy records (dspy.utils.saving.get_dependency_versions)."""

    python: ShortText
    dspy: ShortText
    cloudpickle: ShortText | None = None


class ProgramMetadata(StrictJson):
    """The `metadata` entry DSPy writes beside the state."""

    dependency_versions: DependencyVersions


def unknown_key(path: str) -> str:
    """Why the key at `path` is refused: the schema does not know it (and, when it looks like one, it names an LM,
    an endpoint or a credential, which no export carries)."""
    if is_forbidden_key(path.rsplit(".", 1)[-1]):
        return f"unknown key ({path!r} names an LM, model, endpoint or credential; an export never carries one)"
    return "unknown key"


def validate_model(model: type[M], value: Any, file: str, prefix: str = "") -> M:
    """`value` validated as `model`; ExportError naming every bad key path."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise schema_error(exc, file, prefix) from None


def schema_error(exc: ValidationError, file: str, prefix: str = "") -> ExportError:
    """An ExportError listing the key paths and problems of a pydantic ValidationError."""
    problems = []
    paths = []
    for error in exc.errors()[:5]:
        path = ".".join([prefix, *(str(part) for part in error["loc"])] if prefix else map(str, error["loc"]))
        paths.append(path)
        message = unknown_key(path) if error["type"] == "extra_forbidden" else error["msg"]
        problems.append(f"{path or '(top level)'}: {message}")
    more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return ExportError(
        file,
        "does not match the schema: " + "; ".join(problems) + more,
        "Re-create it with `scoperag export`; hand-edited or foreign files are not loaded",
        key_path=paths[0] if paths else "",
    )
