"""Which program answers: an export named on the command line, else the active profile's, else the uncompiled one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.export.profiles import ProfilePaths, active_profile
from pipeline.export.saving import load_export
from pipeline.export.schema import ExportManifest
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store


@dataclass(frozen=True)
class ProgramChoice:
    """The program to run, the export it was loaded from (None: uncompiled), its profile and where it came from."""

    program: ScopedQA
    manifest: ExportManifest | None
    profile: str | None
    source: str


def choose_program(
    store: Store, program_dir: Path | None, profiles: ProfilePaths | None, settings: Settings | None = None
) -> ProgramChoice:
    """`program_dir`'s export, else the active profile's (when `profiles` is given), else an uncompiled
    ScopedQA; the program runs with `settings` (default: Settings()).

    Each export is loaded strictly (load_export); a broken one is an error, never a silent fallback.
    """
    base = ScopedQA(store, settings)
    if program_dir is not None:
        loaded = load_export(program_dir, base)
        return ProgramChoice(loaded.program, loaded.manifest, None, f"export {program_dir}")
    active = active_profile(profiles) if profiles is not None else None
    if active is not None:
        loaded = load_export(active.program, base)
        source = f"profile '{active.name}' ({active.program})"
        return ProgramChoice(loaded.program, loaded.manifest, active.name, source)
    return ProgramChoice(base, None, None, "uncompiled (no exported program given and no active profile)")
