"""A shipped program routed for another model: the same compiled state and settings, with the steps that model's
measurements send to the LM (scripts/ship_route.py writes the embedded 1.5B model's program with it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pipeline.export.saving import export_program_settings, load_export_with_settings, read_export, save_export
from pipeline.export.schema import ExportManifest
from pipeline.settings import Settings
from pipeline.store import Store


def write_routed(
    source: Path, store: Store, route: Mapping[str, str], out: Path, *, lm_name: str, measured: str
) -> ExportManifest:
    """Export `source`'s program to `out` with `route`'s steps ({"choose": "lm"}; every other step as `source`
    records it), compiled for `lm_name`; its record's description says what was measured (`measured`)."""
    shipped = read_export(source)
    compiled = export_program_settings(shipped.manifest)
    program_settings = compiled.model_copy(update={"steps": compiled.steps.model_copy(update=dict(route))})
    settings = Settings.model_validate(shipped.manifest.config.settings)
    routed, _ = load_export_with_settings(source, store, settings.model_copy(update={"program": program_settings}))
    experiment = {**shipped.manifest.config.experiment, "description": f"Routed for {lm_name}: {measured}"}
    return save_export(
        routed,
        out,
        settings=settings,
        experiment_config=experiment,
        trainset_hash=shipped.manifest.trainset_hash,
        scores={},
        run_id=shipped.manifest.run_id,
        lm_name=lm_name,
        overwrite=True,
    )
