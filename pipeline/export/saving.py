"""save_export / read_export / load_export: a compiled ScopedQA to and from a `scoperag-program/v3` directory."""

from __future__ import annotations

import importlib.metadata
import logging
import platform
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import dspy
from dspy.utils.saving import get_dependency_versions
from pydantic import ValidationError

from pipeline.answering.choose import FLOOR as CHOOSE_FLOOR
from pipeline.answering.judge import FLOOR as JUDGE_FLOOR
from pipeline.errors import ExportError
from pipeline.export.fs import check_target, publish_dir, staged_dir, write_files
from pipeline.export.jsonio import MAX_FILE_BYTES, canonical_json, read_limited, sha256_hex, strict_loads
from pipeline.export.prompts import render_prompts
from pipeline.export.schema import (
    FORMAT,
    MANIFEST,
    METADATA,
    PREDICTORS,
    PROGRAM,
    PROMPTS,
    ExportManifest,
    schema_error,
)
from pipeline.export.validate import ExportContents, validate_export_bytes
from pipeline.program.module import ScopedQA
from pipeline.settings import ProgramSettings, Settings
from pipeline.store import Store

log = logging.getLogger(__name__)


class LoadedExport(NamedTuple):
    """A new program holding the export's state, and the export's manifest (unpacks as a pair)."""

    program: ScopedQA
    manifest: ExportManifest


def save_export(
    program: ScopedQA,
    out_dir: Path,
    *,
    settings: Settings,
    experiment_config: Mapping[str, Any],
    trainset_hash: str,
    scores: Mapping[str, Mapping[str, float]],
    run_id: str | None = None,
    lm_name: str | None = None,
    overwrite: bool = False,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> ExportManifest:
    """The manifest of the export written to `out_dir` atomically (complete, or not there at all).

    Per-predictor LMs are never saved (they may hold an endpoint); `lm_name` is recorded for information.
    """
    out_dir = Path(out_dir)
    check_target(out_dir, overwrite=overwrite)
    state = program_state(program)
    program_bytes = canonical_json(state)
    prompts_bytes = render_prompts(state).encode("utf-8")
    manifest_json = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": {
            "scoperag": _package_version("scoperag"),
            "dspy": str(dspy.__version__),
            "python": platform.python_version(),
            "lm": lm_name,
        },
        "config": {
            # The program's own settings are recorded once, under "program": the ones it runs (which way each step
            # runs, thresholds, sizes). A job's settings may say otherwise (a stage job runs its stage's step by
            # the LM to compile it, and the export may then run the floor that won): two records disagreed.
            "settings": settings.model_dump(mode="json", exclude={"program"}),
            "program": program.settings.program.model_dump(mode="json"),
            "experiment": dict(experiment_config),
        },
        "trainset_hash": trainset_hash,
        "scores": {case: dict(metrics) for case, metrics in scores.items()},
        "run_id": run_id,
        "files": {
            PROGRAM: {"sha256": sha256_hex(program_bytes), "size": len(program_bytes)},
            PROMPTS: {"sha256": sha256_hex(prompts_bytes), "size": len(prompts_bytes)},
        },
    }
    try:
        manifest_bytes = canonical_json(manifest_json)
    except (TypeError, ValueError) as exc:
        raise ExportError(
            f"{out_dir}/{MANIFEST}",
            f"cannot be written as JSON ({exc})",
            "Pass only JSON values (str, finite numbers, bools, null, lists, objects) in config and scores",
        ) from exc
    # Never publish what load_export would refuse.
    contents = validate_export_bytes(
        manifest_bytes, program_bytes, prompts_bytes, where=str(out_dir), max_file_bytes=max_file_bytes
    )
    with staged_dir(out_dir) as staging:
        write_files(staging, {MANIFEST: manifest_bytes, PROGRAM: program_bytes, PROMPTS: prompts_bytes})
        publish_dir(staging, out_dir, overwrite=overwrite)
    log.info("exported program to %s", out_dir)
    return contents.manifest


def read_export(export_dir: Path, *, max_file_bytes: int = MAX_FILE_BYTES) -> ExportContents:
    """The validated contents of an export directory; ExportError naming the file, key path and fix."""
    export_dir = Path(export_dir)
    if not export_dir.is_dir():
        raise ExportError(str(export_dir), "is not a directory", "Point at a directory written by `scoperag export`")
    data = [
        read_limited(export_dir / name, f"{export_dir}/{name}", max_file_bytes) for name in (MANIFEST, PROGRAM, PROMPTS)
    ]
    return validate_export_bytes(*data, where=str(export_dir), max_file_bytes=max_file_bytes)


def load_export(export_dir: Path, program: ScopedQA, *, max_file_bytes: int = MAX_FILE_BYTES) -> LoadedExport:
    """A copy of `program` holding the export's state; `program` itself is never modified.

    Everything is validated before DSPy sees the state, and the state is loaded into a deep copy
    (sharing the read-only store), so a failure leaves nothing half-loaded.
    """
    contents = read_export(export_dir, max_file_bytes=max_file_bytes)
    if contents.manifest.versions.dspy != str(dspy.__version__):
        log.warning(
            "export %s was written with dspy %s; this is dspy %s",
            export_dir,
            contents.manifest.versions.dspy,
            dspy.__version__,
        )
    loaded = apply_state(program, contents.program_state, f"{export_dir}/{PROGRAM}")
    return LoadedExport(program=loaded, manifest=contents.manifest)


# Steps added after exports were first written, each with the floor an export that records no choice for it runs.
LATER_STEPS = {"judge": JUDGE_FLOOR, "choose": CHOOSE_FLOOR}


def export_program_settings(manifest: ExportManifest) -> ProgramSettings:
    """The program settings an export was compiled under (which way each step runs, thresholds, sizes); a step
    the export records no choice for (a step added after the export was written: LATER_STEPS) runs its floor."""
    try:
        compiled = ProgramSettings.model_validate(manifest.config.program)
    except ValidationError as exc:
        raise schema_error(exc, MANIFEST, "config.program") from None
    recorded = manifest.config.program.get("steps")
    if not isinstance(recorded, dict):
        return compiled
    floors = {step: floor for step, floor in LATER_STEPS.items() if step not in recorded}
    return compiled.model_copy(update={"steps": compiled.steps.model_copy(update=floors)}) if floors else compiled


def load_export_with_settings(
    export_dir: Path, store: Store, settings: Settings | None = None, *, max_file_bytes: int = MAX_FILE_BYTES
) -> LoadedExport:
    """A ScopedQA over `store` holding the export's state, run with `settings` (default Settings()) whose
    program section is the one the export was compiled under (steps, thresholds, sizes), except which way
    each step runs when `settings` names it (`[program.steps]`): a step is a choice made at run time, the
    compiled state serves it either way."""
    contents = read_export(export_dir, max_file_bytes=max_file_bytes)
    program = ScopedQA(store, settings_of_export(contents.manifest, settings))
    loaded = apply_state(program, contents.program_state, f"{export_dir}/{PROGRAM}")
    return LoadedExport(program=loaded, manifest=contents.manifest)


def settings_of_export(manifest: ExportManifest, settings: Settings | None = None) -> Settings:
    """`settings` (default Settings()) with the program section the export was compiled under, except which way
    each step runs when `settings` names it (`[program.steps]`)."""
    base = settings or Settings()
    compiled = export_program_settings(manifest)
    if "steps" in base.program.model_fields_set:
        compiled = compiled.model_copy(update={"steps": base.program.steps})
    return base.model_copy(update={"program": compiled})


def apply_state(program: ScopedQA, state: Mapping[str, Any], file: str) -> ScopedQA:
    """A deep copy of `program` with a validated program.json state loaded; ExportError if it does not fit.

    A predictor the state does not carry keeps `program`'s own state.
    """
    _check_shape(program, file)
    fresh: ScopedQA = program.deepcopy()
    own = predictor_states(fresh)
    loaded = [name for name in PREDICTORS if name in state]
    dspy_state = {name: {**(state[name] if name in state else own[name]), "lm": None} for name in PREDICTORS}
    dspy_state[METADATA] = dict(state[METADATA])
    try:
        fresh.load_state(dspy_state)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ExportError(file, f"DSPy could not load the state ({type(exc).__name__}: {exc!s:.300})", _FIX) from exc
    after = predictor_states(fresh)
    if {name: after[name] for name in loaded} != {name: dspy_state[name] for name in loaded}:
        raise ExportError(file, "does not load faithfully into this program (DSPy changed the state)", _FIX)
    return fresh


def program_state(program: ScopedQA) -> dict[str, Any]:
    """program.json's content: DSPy's state of every predictor with `lm` set to null, plus DSPy's metadata."""
    _check_shape(program, "<program being exported>")
    state: dict[str, Any] = predictor_states(program)
    state[METADATA] = {"dependency_versions": get_dependency_versions()}
    return state


def predictor_states(program: ScopedQA) -> dict[str, Any]:
    """Each predictor's `dump_state()` as plain JSON values, its LM dropped (with a warning if one was set)."""
    raw = program.dump_state()
    with_lm = sorted(name for name, predictor in raw.items() if predictor.get("lm") is not None)
    if with_lm:
        log.warning("not exporting the LM set on predictor(s) %s: exports never carry an LM", ", ".join(with_lm))
    for predictor in raw.values():
        predictor["lm"] = None
    try:
        plain: dict[str, Any] = strict_loads(canonical_json(raw), "<program state>")
    except (TypeError, ValueError) as exc:
        raise ExportError(
            "<program state>",
            f"is not plain JSON ({exc})",
            "Give demos only JSON values (str, finite numbers, bools, null, lists, objects, pydantic models)",
        ) from exc
    return plain


def _check_shape(program: ScopedQA, file: str) -> None:
    """ExportError unless `program` has exactly the predictors and signature fields format v1 knows."""
    predictors = dict(program.named_predictors())
    if list(predictors) != list(PREDICTORS):
        raise ExportError(
            file,
            f"the program has predictors {', '.join(predictors)}; {FORMAT} knows {', '.join(PREDICTORS)}",
            "Use a ScopedQA of this scoperag version",
        )
    for name, signature in PREDICTORS.items():
        if list(predictors[name].signature.fields) != list(signature.fields):
            raise ExportError(
                file,
                f"predictor {name} has fields {', '.join(predictors[name].signature.fields)}; "
                f"{FORMAT} expects {', '.join(signature.fields)}",
                "Use a ScopedQA of this scoperag version",
                key_path=name,
            )


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


_FIX = "Re-export the program with this scoperag version"
