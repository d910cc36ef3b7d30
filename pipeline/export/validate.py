"""Every check an export passes before any program sees it; all of them look only at bytes and values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.errors import ExportError
from pipeline.export.demos import demo_problems
from pipeline.export.jsonio import MAX_FILE_BYTES, canonical_json, check_size, sha256_hex, strict_loads
from pipeline.export.prompts import render_prompts
from pipeline.export.record import ExperimentRecord
from pipeline.export.schema import (
    FORMAT,
    FORMAT_FAMILY,
    FORMAT_PREDICTORS,
    FORMATS,
    MANIFEST,
    METADATA,
    OPTIONAL_PREDICTORS,
    PREDICTORS,
    PROGRAM,
    PROMPTS,
    ExportManifest,
    FileEntry,
    PredictorState,
    ProgramMetadata,
    unknown_key,
    validate_model,
)
from pipeline.settings import ProgramSettings, Settings

_REEXPORT = "Re-create it with `scoperag export` from a program of this scoperag version"


@dataclass(frozen=True)
class ExportContents:
    """A fully validated export: the manifest (as a model and as read), the program state and prompts.md."""

    manifest: ExportManifest
    manifest_json: dict[str, Any]
    program_state: dict[str, Any]
    prompts: str


def validate_export_bytes(
    manifest_bytes: bytes,
    program_bytes: bytes,
    prompts_bytes: bytes,
    *,
    where: str,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> ExportContents:
    """The export's contents if all three files pass every check; ExportError naming the first failure."""
    manifest_file, program_file, prompts_file = (f"{where}/{name}" for name in (MANIFEST, PROGRAM, PROMPTS))
    for file, data in ((manifest_file, manifest_bytes), (program_file, program_bytes), (prompts_file, prompts_bytes)):
        check_size(data, file, max_file_bytes)
    manifest_json = strict_loads(manifest_bytes, manifest_file)
    manifest = validate_manifest(manifest_json, manifest_file)
    _check_file(program_file, program_bytes, manifest.files.program, PROGRAM)
    _check_file(prompts_file, prompts_bytes, manifest.files.prompts, PROMPTS)
    state = validate_program(strict_loads(program_bytes, program_file), program_file, manifest.format)
    try:
        prompts = prompts_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ExportError(prompts_file, f"is not UTF-8 text (byte {exc.start})", _REEXPORT) from None
    if prompts != render_prompts(state, manifest.format):
        raise ExportError(
            prompts_file,
            "does not match program.json (prompts.md is generated from it and must not be edited)",
            "Re-export the program to regenerate prompts.md; change prompts by compiling, not by hand",
        )
    _check_canonical(manifest_file, manifest_bytes, manifest_json)
    _check_canonical(program_file, program_bytes, state)
    return ExportContents(manifest=manifest, manifest_json=manifest_json, program_state=state, prompts=prompts)


def validate_manifest(value: Any, file: str) -> ExportManifest:
    """The manifest model; ExportError on another format (version) or any schema problem."""
    if not isinstance(value, dict):
        raise ExportError(file, f"must be a JSON object, not {type(value).__name__}", _REEXPORT)
    found = value.get("format")
    if found not in FORMATS:
        if isinstance(found, str) and found.startswith(FORMAT_FAMILY):
            problem = f"format {found!r} is not supported (this scoperag reads {' and '.join(map(repr, FORMATS))})"
            fix = "Load it with the scoperag version that wrote it, or re-export it with this one"
        else:
            problem = f"format is {found!r}, not {FORMAT!r}: this is not a scoperag program export"
            fix = "Point at a directory written by `scoperag export`"
        raise ExportError(file, problem, fix, key_path="format")
    manifest = validate_model(ExportManifest, value, file)
    # Every section of the config is held to its own schema: a key none of them knows is refused at any
    # depth, and every number is bounded. The LM it was compiled with is named (versions.lm,
    # config.experiment.lm) for information only; nothing is configured from the manifest but the program
    # settings, read by export_program_settings.
    config = value["config"]
    validate_model(Settings, config["settings"], file, "config.settings")
    validate_model(ProgramSettings, config["program"], file, "config.program")
    validate_model(ExperimentRecord, config["experiment"], file, "config.experiment")
    return manifest


def validate_program(value: Any, file: str, format: str = FORMAT) -> dict[str, Any]:
    """`value` unchanged if it is a valid program.json state of `format`; ExportError naming the key path otherwise."""
    if not isinstance(value, dict):
        raise ExportError(file, f"must be a JSON object, not {type(value).__name__}", _REEXPORT)
    known = list(FORMAT_PREDICTORS[format])
    unknown = sorted(set(value) - set(known) - {METADATA})
    if unknown:
        raise ExportError(
            file,
            f"unknown predictor(s) {', '.join(map(repr, unknown))}; ScopedQA has {', '.join(known)}",
            "Export from a ScopedQA program of this scoperag version; other programs cannot be loaded into it",
            key_path=unknown[0],
        )
    missing = [name for name in known if name not in value and name not in OPTIONAL_PREDICTORS]
    if missing:
        required = [name for name in known if name not in OPTIONAL_PREDICTORS]
        raise ExportError(
            file,
            f"missing predictor(s) {', '.join(map(repr, missing))}; every one of {', '.join(required)} is required",
            _REEXPORT,
            key_path=missing[0],
        )
    if METADATA not in value:
        raise ExportError(file, "has no 'metadata' entry (DSPy dependency versions)", _REEXPORT, key_path=METADATA)
    validate_model(ProgramMetadata, value[METADATA], file, METADATA)
    for name in (n for n in known if n in value):
        signature = PREDICTORS[name]
        predictor = value[name]
        if not isinstance(predictor, dict):
            raise ExportError(
                file, f"predictor state must be an object, not {type(predictor).__name__}", _REEXPORT, name
            )
        if predictor.get("lm") is not None:
            keys = sorted(predictor["lm"]) if isinstance(predictor["lm"], dict) else []
            raise ExportError(
                file,
                "carries an LM override" + (f" ({', '.join(keys)})" if keys else "") + "; an export never chooses "
                "the LM, its endpoint or its key",
                "Remove it (set it to null): the LM is configured where the program runs",
                key_path=f"{name}.lm",
            )
        if "fields" in predictor:
            raise ExportError(
                file,
                "has decision settings ('fields'), which none of ScopedQA's signatures use",
                "Remove the key; scoperag-program/v3 does not carry decision settings",
                key_path=f"{name}.fields",
            )
        parsed = validate_model(PredictorState, predictor, file, name)
        for index, demo in enumerate(predictor["demos"]):
            found = next(demo_problems(demo, signature, f"{name}.demos[{index}]"), None)
            if found is not None:
                key_path, problem = found
                problem = unknown_key(key_path) if problem == "unknown key" else problem
                raise ExportError(file, f"{key_path}: {problem}", _REEXPORT, key_path=key_path)
        expected = list(signature.fields)
        if len(parsed.signature.fields) != len(expected):
            raise ExportError(
                file,
                f"has {len(parsed.signature.fields)} signature fields; {name} has {len(expected)} "
                f"({', '.join(expected)})",
                _REEXPORT,
                key_path=f"{name}.signature.fields",
            )
    return value


def _check_file(file: str, data: bytes, entry: FileEntry, name: str) -> None:
    actual = sha256_hex(data)
    if actual != entry.sha256 or len(data) != entry.size:
        raise ExportError(
            file,
            f"does not match its entry in the manifest (sha256 {actual[:12]}…, {len(data)} bytes; "
            f"manifest: {entry.sha256[:12]}…, {entry.size} bytes)",
            "The file changed after export: restore the original or export again",
            key_path=f"files.{name}",
        )


def _check_canonical(file: str, data: bytes, value: Any) -> None:
    """ExportError unless `data` is exactly how scoperag writes `value`, so re-serialising reproduces it."""
    try:
        canonical = canonical_json(value)
    except ValueError:  # includes UnicodeEncodeError: a lone surrogate written as a \u escape
        canonical = b""
    if canonical != data:
        raise ExportError(
            file,
            "is not in scoperag's canonical JSON form (sorted keys, 2-space indent, UTF-8, final newline)",
            "Re-export it; files written by scoperag are never reformatted or edited by hand",
        )
