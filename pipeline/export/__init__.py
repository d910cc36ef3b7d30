"""The `scoperag-program/v3` export format: a directory of plain JSON (manifest, program state, prompts)."""

from pipeline.export.jsonio import FORBIDDEN_KEYS, MAX_FILE_BYTES, canonical_json, is_forbidden_key, strict_loads
from pipeline.export.prompts import render_prompts
from pipeline.export.saving import LoadedExport, apply_state, load_export, program_state, read_export, save_export
from pipeline.export.schema import FORMAT, MANIFEST, PREDICTORS, PROGRAM, PROMPTS, ExportManifest
from pipeline.export.validate import ExportContents, validate_export_bytes

__all__ = [
    "FORBIDDEN_KEYS",
    "FORMAT",
    "MANIFEST",
    "MAX_FILE_BYTES",
    "PREDICTORS",
    "PROGRAM",
    "PROMPTS",
    "ExportContents",
    "ExportManifest",
    "LoadedExport",
    "apply_state",
    "canonical_json",
    "is_forbidden_key",
    "load_export",
    "program_state",
    "read_export",
    "render_prompts",
    "save_export",
    "strict_loads",
    "validate_export_bytes",
]
