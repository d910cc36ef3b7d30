"""Which program answers: an export named on the command line, else the active profile's, else the program
shipped with scoperag (pipeline/export/shipped/), else the uncompiled one; `uncompiled` drops the compiled
state and keeps the settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.export.profiles import ProfilePaths, active_profile
from pipeline.export.saving import load_export_with_settings
from pipeline.export.schema import ExportManifest
from pipeline.program.lm.factory import parse_lm_spec
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store

# The compiled program `ask`, `serve` and `make demo` use by default on the embedded model (made by
# `make ship`, README.md "Results"); absent, or with another LM, the default is the uncompiled program.
SHIPPED_PROGRAM = Path(__file__).parent / "shipped"


def shipped_for(lm_spec: str | None) -> Path | None:
    """The shipped program when the LM `lm_spec` names (None: the embedded model) is the embedded model it
    was compiled and measured on; None for any other LM, which runs uncompiled until compiled for it."""
    return SHIPPED_PROGRAM if parse_lm_spec(lm_spec).kind == "embedded" else None


@dataclass(frozen=True)
class ProgramChoice:
    """The program to run, the export it was loaded from (None: uncompiled), its profile and where it came from."""

    program: ScopedQA
    manifest: ExportManifest | None
    profile: str | None
    source: str


def choose_program(
    store: Store,
    program_dir: Path | None,
    profiles: ProfilePaths | None,
    settings: Settings | None = None,
    *,
    shipped: Path | None = SHIPPED_PROGRAM,
    uncompiled: bool = False,
) -> ProgramChoice:
    """`program_dir`'s export, else the active profile's (when `profiles` is given), else the `shipped` one
    (when that directory exists), else an uncompiled ScopedQA; the program runs with `settings` (default:
    Settings()), its program section replaced by the one the export was compiled under.

    Each export is loaded strictly; a broken one is an error, never a silent fallback. `uncompiled` runs
    the program as written (no instructions or demos from any export) with the settings of the export
    that would have been chosen, so that the two differ by compiling only.
    """
    settings = settings or Settings()
    chosen = _choose_export(program_dir, profiles, shipped)
    if chosen is None:
        why = "--uncompiled" if uncompiled else "no exported program given and no active profile"
        return ProgramChoice(ScopedQA(store, settings), None, None, f"uncompiled ({why})")
    directory, profile, source = chosen
    loaded = load_export_with_settings(directory, store, settings)
    if uncompiled:
        plain = ScopedQA(store, loaded.program.settings)
        return ProgramChoice(plain, None, None, f"uncompiled (--uncompiled), settings of {source}")
    return ProgramChoice(loaded.program, loaded.manifest, profile, source)


def _choose_export(
    program_dir: Path | None, profiles: ProfilePaths | None, shipped: Path | None
) -> tuple[Path, str | None, str] | None:
    """(export directory, profile name, where it came from) of the export that runs; None: no export."""
    if program_dir is not None:
        return program_dir, None, f"export {program_dir}"
    active = active_profile(profiles) if profiles is not None else None
    if active is not None:
        return active.program, active.name, f"profile '{active.name}' ({active.program})"
    if shipped is not None and shipped.is_dir():
        return shipped, None, f"the shipped compiled program ({shipped.name})"
    return None
