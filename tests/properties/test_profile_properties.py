"""Properties (hypothesis) of prompt profiles (pipeline/export/profiles.py): an imported profile loads or
fails typed, a round trip is byte-identical, and the registry file loads or fails typed.

Each property is one `check_*` function turned into two tests by `fast_and_slow` (tests/support/properties.py):
`test_*` runs 50 examples in the default run, `test_*_slow` 1,000 under `-m slow`; both derandomized, no
example database.
"""

from __future__ import annotations

import contextlib
import copy
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event
from hypothesis import strategies as st

from pipeline.errors import ProfileError, ScopeRagError
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, canonical_json, read_export, render_prompts
from pipeline.export.jsonio import sha256_hex
from pipeline.export.profiles import (
    NAME_PATTERN,
    REGISTRY_FORMAT,
    ProfilePaths,
    active_profile,
    add_profile,
    export_profile,
    import_profile,
    list_profiles,
    profile_json,
)
from pipeline.store import open_store
from pipeline.store.embedders import HashEmbedder
from tests.support.properties import (
    JSON_VALUES,
    RAW_JSON_TRAPS,
    edit_a_predictor,
    fast_and_slow,
    mutated_bytes,
    mutated_json,
    save_sample_export,
)


@dataclass(frozen=True)
class ProfileBase:
    """A real export (written by save_export from a ScopedQA) and its inlined profile document."""

    export_dir: Path
    payload: dict[str, Any]


@pytest.fixture(scope="module")
def profile_base(demo_index_dir: Path, embedder: HashEmbedder, tmp_path_factory: pytest.TempPathFactory) -> ProfileBase:
    root = tmp_path_factory.mktemp("fuzz-profiles")
    save_sample_export(open_store(demo_index_dir, embedder), root / "export")
    paths = _paths(root)
    add_profile(paths, "base", root / "export", note="the base profile")
    return ProfileBase(root / "export", json.loads(profile_json(export_profile(paths, "base"))))


def _paths(root: Path) -> ProfilePaths:
    return ProfilePaths(registry=root / ".scoperag" / "profiles.json", root=root / ".scoperag" / "profiles")


def _registered(root: Path, base: ProfileBase) -> ProfilePaths:
    """A fresh registry under `root` with the base export registered as "base"."""
    paths = _paths(root)
    add_profile(paths, "base", base.export_dir, note="the base profile")
    return paths


def _vouch(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with prompts.md regenerated and the manifest vouching for its (edited) program."""
    inline = payload["export"]
    # A state too broken to render keeps the old text (a demo mutated into a list of numbers: IndexError).
    with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError, IndexError):
        inline["prompts_md"] = render_prompts(inline["program"])
    files = inline["manifest"].get("files") if isinstance(inline["manifest"], dict) else None
    if isinstance(files, dict):
        program = canonical_json(inline["program"])
        prompts = inline["prompts_md"].encode("utf-8") if isinstance(inline["prompts_md"], str) else b""
        files[PROGRAM] = {"sha256": sha256_hex(program), "size": len(program)}
        files[PROMPTS] = {"sha256": sha256_hex(prompts), "size": len(prompts)}
    return payload


NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
VALID_NAMES = st.builds(str.__add__, st.sampled_from(NAME_CHARS), st.text(alphabet=NAME_CHARS + "_.-", max_size=63))


@st.composite
def valid_edits(draw: st.DrawFn, payload: dict[str, Any]) -> dict[str, Any]:
    """A copy of `payload` with any note, and one predictor's instructions and demos replaced by any text and
    JSON (no LM keys), prompts.md and the manifest's hashes updated to match: still a valid profile."""
    payload = copy.deepcopy(payload)
    payload["note"] = draw(st.text(max_size=300))
    edit_a_predictor(draw, payload["export"]["program"])
    return _vouch(payload)


@st.composite
def profile_documents(draw: st.DrawFn, payload: dict[str, Any]) -> bytes:
    """Bytes offered to import_profile: the real document or a valid edit of it, the document mutated as JSON
    (with or without the manifest vouching for the change) or as bytes, other JSON, strict-JSON traps, any bytes."""
    kind = draw(st.integers(0, 9))
    if kind <= 1:
        return profile_json(draw(valid_edits(payload)))
    if kind <= 3:
        return profile_json(draw(mutated_json(payload)))
    if kind <= 6:
        edited = copy.deepcopy(payload)
        edited["export"]["program"] = draw(mutated_json(edited["export"]["program"]))
        return profile_json(_vouch(edited))
    if kind == 7:
        return draw(mutated_bytes(profile_json(payload)))
    return draw(
        st.one_of(
            JSON_VALUES.map(lambda v: json.dumps(v).encode()),
            st.sampled_from(RAW_JSON_TRAPS),
            st.binary(max_size=100),
        )
    )


PROFILE_NAMES = st.one_of(st.sampled_from(["gamma", "base"]), VALID_NAMES, st.text(max_size=70))


def check_profile_import_accepts_or_fails_typed(profile_base: ProfileBase, data: st.DataObject) -> None:
    """import_profile on any bytes and name either imports a profile that exports back to the same document
    byte for byte (under its new name), or raises a ScopeRagError and leaves the registry and the profiles
    directory untouched; never another exception."""
    document = data.draw(profile_documents(profile_base.payload), label="document")
    name = data.draw(PROFILE_NAMES, label="name")
    confirm = data.draw(st.booleans(), label="confirm_overwrite")
    with tempfile.TemporaryDirectory() as tmp:
        paths = _registered(Path(tmp), profile_base)
        before = paths.registry.read_bytes()
        try:
            info = import_profile(paths, document, name, confirm_overwrite=confirm)
        except ScopeRagError as exc:
            event(f"import: {type(exc).__name__}")
            assert paths.registry.read_bytes() == before
            assert not paths.root.exists()
            return
        event("import: accepted")
        value = json.loads(document)
        assert info.name == name and info.program == paths.root / name
        assert profile_json(export_profile(paths, name)) == profile_json({**value, "name": name})


test_profile_import_accepts_or_fails_typed, test_profile_import_accepts_or_fails_typed_slow = fast_and_slow(
    check_profile_import_accepts_or_fails_typed, data=st.data()
)


def check_profile_round_trip_is_byte_identical(profile_base: ProfileBase, data: st.DataObject) -> None:
    """A profile with any note, instructions and demo values (valid JSON) survives export -> import -> export
    byte for byte but for its name, and its files on disk hold the same program state."""
    payload = data.draw(valid_edits(profile_base.payload), label="payload")
    document = profile_json(payload)
    first, second = data.draw(st.lists(VALID_NAMES, min_size=2, max_size=2, unique=True), label="names")
    with tempfile.TemporaryDirectory() as tmp:
        paths = _paths(Path(tmp))
        info = import_profile(paths, document, first, confirm_overwrite=False)
        exported = profile_json(export_profile(paths, first))
        assert exported == profile_json({**payload, "name": first})
        assert read_export(info.program).program_state == payload["export"]["program"]
        import_profile(paths, exported, second, confirm_overwrite=False)
        assert profile_json(export_profile(paths, second)) == profile_json({**payload, "name": second})
        for file in (MANIFEST, PROGRAM, PROMPTS):
            assert (paths.root / first / file).read_bytes() == (paths.root / second / file).read_bytes()


test_profile_round_trip_is_byte_identical, test_profile_round_trip_is_byte_identical_slow = fast_and_slow(
    check_profile_round_trip_is_byte_identical, data=st.data()
)


@st.composite
def registries(draw: st.DrawFn) -> dict[str, Any]:
    """A valid profiles.json value with arbitrary names, paths, times and notes."""
    names = draw(st.lists(VALID_NAMES.filter(lambda n: n != "zz-new"), max_size=3, unique=True))
    entry = st.fixed_dictionaries(
        {
            "program": st.text(min_size=1, max_size=40),
            "created_at": st.text(min_size=1, max_size=30),
            "note": st.text(max_size=40),
        }
    )
    return {
        "format": REGISTRY_FORMAT,
        "active": draw(st.sampled_from([None, *names])),
        "profiles": {name: draw(entry) for name in names},
    }


@st.composite
def registry_documents(draw: st.DrawFn) -> bytes:
    kind = draw(st.integers(0, 5))
    if kind <= 1:
        return canonical_json(draw(registries()))
    if kind <= 3:
        return json.dumps(draw(mutated_json(draw(registries())))).encode()
    return draw(st.one_of(st.binary(max_size=80), st.sampled_from(RAW_JSON_TRAPS), JSON_VALUES.map(canonical_json)))


def check_registry_files_load_or_fail_typed(profile_base: ProfileBase, data: st.DataObject) -> None:
    """list_profiles/active_profile on any profiles.json either list valid names (the active one among them)
    or raise ProfileError; a registry that loads keeps every entry and the active profile unchanged when
    add_profile rewrites it."""
    document = data.draw(registry_documents(), label="registry")
    with tempfile.TemporaryDirectory() as tmp:
        paths = _paths(Path(tmp))
        paths.registry.parent.mkdir(parents=True)
        paths.registry.write_bytes(document)
        try:
            infos = list_profiles(paths)
            active = active_profile(paths)
        except ProfileError:
            event("registry: ProfileError")
            return
        event("registry: loaded")
        names = [i.name for i in infos]
        assert names == sorted(names) and all(NAME_PATTERN.fullmatch(n) for n in names)
        assert active is None or active.name in names
        add_profile(paths, "zz-new", profile_base.export_dir)
        after = {i.name: i for i in list_profiles(paths)}
        assert [after[i.name] for i in infos] == infos and "zz-new" in after
        assert active_profile(paths) == active


test_registry_files_load_or_fail_typed, test_registry_files_load_or_fail_typed_slow = fast_and_slow(
    check_registry_files_load_or_fail_typed, data=st.data()
)
