"""Named prompt profiles: exported programs registered under a name, one of them active, movable as JSON.

The registry (`scoperag-profiles/v1`) is one JSON file; a profile points to a `scoperag-program/v3`
directory. `export_profile` inlines that directory into one `scoperag-profile/v1` document and
`import_profile` writes it back under the profiles root, validated by the same rules as `load_export`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, JsonValue, ValidationError

from pipeline.errors import ExportError, ProfileError, ProfileExistsError
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, canonical_json, read_export, strict_loads, validate_export_bytes
from pipeline.export.fs import publish_dir, staged_dir, write_files
from pipeline.export.jsonio import MAX_FILE_BYTES, read_limited
from pipeline.export.schema import validate_model
from pipeline.export.validate import ExportContents
from pipeline.files import exclusive_lock, write_file_atomic
from pipeline.guards.sanitise import MAX_NOTE_CHARS, sanitised_text
from pipeline.types import StrictJson

log = logging.getLogger(__name__)

REGISTRY_FORMAT = "scoperag-profiles/v1"
PROFILE_FORMAT = "scoperag-profile/v1"
BUNDLE_FORMAT = "scoperag-profiles-bundle/v1"
MAX_PROFILE_BYTES = 1024 * 1024
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
PAYLOAD = "profile payload"


@dataclass(frozen=True)
class ProfilePaths:
    """Where the registry file lives and under which directory imported exports are written."""

    registry: Path
    root: Path


@dataclass(frozen=True)
class ProfileInfo:
    """One registered profile, as shown: its note is sanitised display text (the registry keeps it as given)."""

    name: str
    program: Path
    created_at: str
    note: str
    active: bool


class ProfileEntry(StrictJson):
    """A registry entry: the export directory (relative to the registry's folder when inside it)."""

    program: str = Field(min_length=1, max_length=4096)
    created_at: str = Field(min_length=1, max_length=64)
    note: str = Field(default="", max_length=2000)


class Registry(StrictJson):
    """profiles.json."""

    format: Literal["scoperag-profiles/v1"]
    active: str | None
    profiles: dict[str, ProfileEntry]


class InlineExport(StrictJson):
    """A whole `scoperag-program/v3` directory inside one JSON document."""

    manifest: dict[str, JsonValue]
    program: dict[str, JsonValue]
    prompts_md: str


class ProfilePayload(StrictJson):
    """One profile as moved between machines (`scoperag-profile/v1`)."""

    format: Literal["scoperag-profile/v1"]
    name: str = Field(pattern=f"^{NAME_PATTERN.pattern}$")
    note: str = Field(max_length=2000)
    export: InlineExport


def check_name(name: str) -> str:
    """`name` if it is a valid profile name; ProfileError otherwise."""
    if not isinstance(name, str) or NAME_PATTERN.fullmatch(name) is None:
        raise ProfileError(
            name,
            "is not a valid profile name",
            "Use 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit",
        )
    return name


def list_profiles(paths: ProfilePaths) -> list[ProfileInfo]:
    """Every registered profile, by name."""
    registry = _read_registry(paths)
    return [_info(paths, registry, name) for name in sorted(registry.profiles)]


def active_profile(paths: ProfilePaths) -> ProfileInfo | None:
    """The active profile, or None when none is active."""
    registry = _read_registry(paths)
    return None if registry.active is None else _info(paths, registry, registry.active)


def add_profile(
    paths: ProfilePaths, name: str, export_dir: Path, *, note: str = "", confirm_overwrite: bool = False
) -> ProfileInfo:
    """The profile `name` registered to point at `export_dir`, once the export passes every load check."""
    check_name(name)
    read_export(Path(export_dir))
    with _registry_lock(paths):
        registry = _read_registry(paths)
        if name in registry.profiles and not confirm_overwrite:
            raise ProfileExistsError(name)
        entry = _entry(name, _stored_path(paths, Path(export_dir)), note)
        registry = registry.model_copy(update={"profiles": {**registry.profiles, name: entry}})
        _write_registry(paths, registry)
        return _info(paths, registry, name)


def activate(paths: ProfilePaths, name: str) -> ProfileInfo:
    """Profile `name`, now active; its export is checked first, so the active profile always loads."""
    check_name(name)
    with _registry_lock(paths):
        registry = _read_registry(paths)
        _require(registry, name)
        read_export(_resolved_path(paths, registry.profiles[name].program))
        registry = registry.model_copy(update={"active": name})
        _write_registry(paths, registry)
        return _info(paths, registry, name)


def deactivate(paths: ProfilePaths) -> ProfileInfo | None:
    """No profile is active any more (ask, evaluate and serve choose their program as if none were registered);
    the profile that was active, or None when none was. Every profile stays registered."""
    with _registry_lock(paths):
        registry = _read_registry(paths)
        if registry.active is None:
            return None
        info = _info(paths, registry, registry.active)
        _write_registry(paths, registry.model_copy(update={"active": None}))
    log.info("deactivated profile %s", info.name)
    return info


def export_profile(paths: ProfilePaths, name: str) -> dict[str, Any]:
    """Profile `name` with its export inlined (`scoperag-profile/v1`), small enough for import_profile."""
    check_name(name)
    data = _payload(paths, _read_registry(paths), name)
    size = len(canonical_json(data))
    if size > MAX_PROFILE_BYTES:
        raise ProfileError(
            name,
            f"is {size} bytes as one profile document, over the {MAX_PROFILE_BYTES}-byte import limit",
            "Copy the export directory itself and register it with `scoperag profile add`",
        )
    return data


def export_all(paths: ProfilePaths) -> dict[str, Any]:
    """Every profile inlined, and which one is active (`scoperag-profiles-bundle/v1`), for backups."""
    registry = _read_registry(paths)
    return {
        "format": BUNDLE_FORMAT,
        "active": registry.active,
        "profiles": {name: _payload(paths, registry, name) for name in sorted(registry.profiles)},
    }


def profile_json(data: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a profile or bundle document (sorted keys, UTF-8, final newline)."""
    return canonical_json(data)


def import_profile(paths: ProfilePaths, data: bytes, name: str, *, confirm_overwrite: bool) -> ProfileInfo:
    """Profile `name` written from a `scoperag-profile/v1` document; the active profile is never changed.

    The payload is validated in full (format, size, the same strict rules as load_export) before
    anything is written; an existing profile is replaced only with `confirm_overwrite`.
    """
    check_name(name)
    checked = checked_payload(data)
    files = checked.files
    with _registry_lock(paths):
        registry = _read_registry(paths)
        target = paths.root / name
        if name in registry.profiles:
            if not confirm_overwrite:
                raise ProfileExistsError(name)
        elif target.exists() and not confirm_overwrite:
            raise ProfileError(
                name,
                f"{target} already exists but is not a registered profile",
                "Move or remove that directory, or confirm the replacement (`--yes`, or Replace on the web page)",
            )
        with staged_dir(target) as staging:
            write_files(staging, files)
            publish_dir(staging, target, overwrite=True)
        entry = _entry(name, _stored_path(paths, target), checked.note)
        # only this profile's entry changes; `active` is carried over untouched
        registry = registry.model_copy(update={"profiles": {**registry.profiles, name: entry}})
        _write_registry(paths, registry)
    log.info("imported profile %s into %s", name, target)
    return _info(paths, registry, name)


@dataclass(frozen=True)
class CheckedProfile:
    """A profile document that passed every check: its name and note as written, its export's files and contents."""

    name: str
    note: str
    files: dict[str, bytes]
    contents: ExportContents


def checked_payload(data: bytes) -> CheckedProfile:
    """A `scoperag-profile/v1` document checked in full (format, size, the same strict rules as load_export);
    nothing is written. ExportError names the first problem."""
    if len(data) > MAX_PROFILE_BYTES:
        raise ExportError(
            PAYLOAD,
            f"is {len(data)} bytes, over the {MAX_PROFILE_BYTES}-byte limit",
            "Check that this is a profile exported by scoperag; large programs move as export directories",
        )
    value = strict_loads(data, PAYLOAD)
    _check_payload_format(value)
    validate_model(ProfilePayload, value, PAYLOAD)
    inline = value["export"]
    files = {
        MANIFEST: canonical_json(inline["manifest"]),
        PROGRAM: canonical_json(inline["program"]),
        PROMPTS: inline["prompts_md"].encode("utf-8"),
    }
    contents = validate_export_bytes(
        files[MANIFEST], files[PROGRAM], files[PROMPTS], where=f"{PAYLOAD} export", max_file_bytes=MAX_PROFILE_BYTES
    )
    return CheckedProfile(value["name"], value["note"], files, contents)


def remove_profile(paths: ProfilePaths, name: str) -> ProfileInfo:
    """Profile `name`, no longer registered (never the active one); its export directory is deleted when it was
    imported under the profiles root, and kept when `add_profile` registered a directory elsewhere."""
    check_name(name)
    with _registry_lock(paths):
        registry = _read_registry(paths)
        _require(registry, name)
        if registry.active == name:
            raise ProfileError(
                name,
                "is the active profile",
                "Deactivate it (`scoperag profile deactivate`) or activate another profile first, then remove it",
            )
        info = _info(paths, registry, name)
        profiles = {key: entry for key, entry in registry.profiles.items() if key != name}
        _write_registry(paths, registry.model_copy(update={"profiles": profiles}))
        imported = (paths.root / name).resolve()
        if info.program.resolve() == imported and imported.is_dir():
            shutil.rmtree(imported)
    log.info("removed profile %s", name)
    return info


# -- helpers ------------------------------------------------------------------------------------


def _payload(paths: ProfilePaths, registry: Registry, name: str) -> dict[str, Any]:
    _require(registry, name)
    entry = registry.profiles[name]
    contents = read_export(_resolved_path(paths, entry.program))
    return {
        "format": PROFILE_FORMAT,
        "name": name,
        "note": entry.note,
        "export": {
            "manifest": contents.manifest_json,
            "program": contents.program_state,
            "prompts_md": contents.prompts,
        },
    }


def _check_payload_format(value: Any) -> None:
    found = value.get("format") if isinstance(value, dict) else None
    if found == PROFILE_FORMAT:
        return
    if found == BUNDLE_FORMAT:
        problem = "is a bundle of all profiles, not one profile"
        fix = f"Import one profile document ({PROFILE_FORMAT}), as `scoperag profile export NAME` writes"
    elif isinstance(found, str) and found.startswith("scoperag-profile/"):
        problem = f"format {found!r} is not supported (this scoperag reads {PROFILE_FORMAT!r})"
        fix = "Export the profile again with this scoperag version"
    else:
        problem = f"format is {found!r}, not {PROFILE_FORMAT!r}: this is not a scoperag profile"
        fix = "Import a file `scoperag profile export` (or Export on the web page) wrote"
    raise ExportError(PAYLOAD, problem, fix, key_path="format")


def _entry(name: str, program: str, note: str) -> ProfileEntry:
    try:
        return ProfileEntry(program=program, created_at=_now(), note=note)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ProfileError(name, f"cannot be registered ({problems})", "Use a note of at most 2000 characters") from exc


def _require(registry: Registry, name: str) -> None:
    if name not in registry.profiles:
        known = ", ".join(sorted(registry.profiles)) or "none"
        raise ProfileError(name, f"no such profile (registered: {known})", "Add or import it first")


def _info(paths: ProfilePaths, registry: Registry, name: str) -> ProfileInfo:
    entry = registry.profiles[name]
    return ProfileInfo(
        name=name,
        program=_resolved_path(paths, entry.program),
        created_at=entry.created_at,
        note=sanitised_text(entry.note, MAX_NOTE_CHARS),
        active=registry.active == name,
    )


def _registry_lock(paths: ProfilePaths) -> contextlib.AbstractContextManager[None]:
    """Held around every read-modify-write of the registry, so concurrent changes are not lost."""
    return exclusive_lock(paths.registry.with_name(f".{paths.registry.name}.lock"), wait=True)


def _read_registry(paths: ProfilePaths) -> Registry:
    file = str(paths.registry)
    if not paths.registry.exists():
        return Registry(format="scoperag-profiles/v1", active=None, profiles={})
    fix = f"Repair {file} or move it away (the profiles' export directories are kept)"
    try:
        value = strict_loads(read_limited(paths.registry, file, MAX_FILE_BYTES), file)
    except ExportError as exc:
        raise ProfileError(None, f"the profile registry {exc.file} is unreadable: {exc.problem}", fix) from exc
    found = value.get("format") if isinstance(value, dict) else None
    if found != REGISTRY_FORMAT:
        raise ProfileError(None, f"{file} has format {found!r}, not {REGISTRY_FORMAT!r}", fix)
    try:
        registry = validate_model(Registry, value, file)
    except ExportError as exc:
        raise ProfileError(None, f"the profile registry {exc.problem}", fix) from exc
    bad = [n for n in registry.profiles if NAME_PATTERN.fullmatch(n) is None]
    if bad:
        raise ProfileError(None, f"{file} has invalid profile names {bad!r}", fix)
    if registry.active is not None and registry.active not in registry.profiles:
        raise ProfileError(None, f"{file} marks {registry.active!r} active but has no such profile", fix)
    return registry


def _write_registry(paths: ProfilePaths, registry: Registry) -> None:
    try:
        data = canonical_json(registry.model_dump(mode="json"))
    except ValueError as exc:  # a note holding a lone surrogate
        raise ProfileError(None, f"the profile registry cannot be written as JSON ({exc})", "Use plain text") from exc
    try:
        write_file_atomic(paths.registry, data)
    except OSError as exc:
        raise ProfileError(
            None,
            f"could not write the profile registry {paths.registry} ({exc.strerror or exc})",
            "Check the permissions and free space of its folder; the previous registry is unchanged",
        ) from exc


def _stored_path(paths: ProfilePaths, path: Path) -> str:
    """`path` relative to the registry's folder when inside it (so the folder can move), else absolute."""
    absolute = path.resolve()
    try:
        return absolute.relative_to(paths.registry.parent.resolve()).as_posix()
    except ValueError:
        return str(absolute)


def _resolved_path(paths: ProfilePaths, stored: str) -> Path:
    path = Path(stored)
    return path if path.is_absolute() else paths.registry.parent / path


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
