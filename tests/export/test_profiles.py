"""Prompt profiles: registry, activation, export/import round trip, and one test per rejection."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dspy
import pytest

from pipeline.errors import ExportError, ProfileError, ProfileExistsError
from pipeline.export import MANIFEST, PROGRAM, PROMPTS, canonical_json, load_export, save_export
from pipeline.export.jsonio import sha256_hex
from pipeline.export.profiles import (
    BUNDLE_FORMAT,
    MAX_PROFILE_BYTES,
    PROFILE_FORMAT,
    ProfilePaths,
    activate,
    active_profile,
    add_profile,
    export_all,
    export_profile,
    import_profile,
    list_profiles,
    profile_json,
)
from pipeline.program.module import ScopedQA
from pipeline.settings import Settings
from pipeline.store import Store


def _program(store: Store, question: str) -> ScopedQA:
    program = ScopedQA(store)
    program.decompose.demos = [dspy.Example(question=question, sub_questions=[question, "And the date?"])]
    program.hyde.demos = [dspy.Example(question=question, passage="A lease stating the monthly rent.")]
    return program


def _export(program: ScopedQA, out: Path) -> Path:
    save_export(
        program,
        out,
        settings=Settings(),
        experiment_config={"optimizer": "none"},
        trainset_hash="sha256:" + "1" * 64,
        scores={"case-1": {"recall": 0.75}},
        run_id=None,
        lm_name="embedded",
    )
    return out


@pytest.fixture
def paths(tmp_path: Path) -> ProfilePaths:
    return ProfilePaths(registry=tmp_path / ".scoperag" / "profiles.json", root=tmp_path / ".scoperag" / "profiles")


@pytest.fixture
def exports(tmp_path: Path, demo_store: Store) -> dict[str, Path]:
    return {
        "a": _export(_program(demo_store, "What is the rent?"), tmp_path / "exports" / "a"),
        "b": _export(_program(demo_store, "Who is the tenant?"), tmp_path / "exports" / "b"),
    }


@pytest.fixture
def registered(paths: ProfilePaths, exports: dict[str, Path]) -> ProfilePaths:
    add_profile(paths, "alpha", exports["a"], note="baseline")
    add_profile(paths, "beta", exports["b"])
    return paths


def _registry_bytes(paths: ProfilePaths) -> bytes | None:
    return paths.registry.read_bytes() if paths.registry.exists() else None


def _payload(paths: ProfilePaths, name: str = "alpha") -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(profile_json(export_profile(paths, name)))
    return payload


def _vouch(payload: dict[str, Any]) -> bytes:
    """The payload's bytes with the inlined manifest vouching for its (edited) program."""
    program = canonical_json(payload["export"]["program"])
    payload["export"]["manifest"]["files"][PROGRAM] = {"sha256": sha256_hex(program), "size": len(program)}
    return profile_json(payload)


# -- registry --------------------------------------------------------------------------------------


def test_empty_registry(paths: ProfilePaths) -> None:
    assert list_profiles(paths) == []
    assert active_profile(paths) is None
    assert not paths.registry.exists()


def test_add_list_activate(registered: ProfilePaths, exports: dict[str, Path]) -> None:
    profiles = list_profiles(registered)
    assert [p.name for p in profiles] == ["alpha", "beta"]
    assert profiles[0].program == exports["a"].resolve() and profiles[0].note == "baseline"
    assert not any(p.active for p in profiles) and active_profile(registered) is None
    activate(registered, "beta")
    active = active_profile(registered)
    assert active is not None and active.name == "beta" and active.active
    assert [p.active for p in list_profiles(registered)] == [False, True]
    registry = json.loads(registered.registry.read_bytes())
    assert registry["format"] == "scoperag-profiles/v1" and registry["active"] == "beta"
    assert set(registry["profiles"]["alpha"]) == {"program", "created_at", "note"}
    # no temp files left; the lock file stays (removing it would let two writers lock different files)
    assert sorted(p.name for p in registered.registry.parent.iterdir()) == [".profiles.json.lock", "profiles.json"]


def test_concurrent_changes_to_the_registry_are_all_kept(paths: ProfilePaths, exports: dict[str, Path]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    names = [f"p{i}" for i in range(12)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda n: add_profile(paths, n, exports["a" if n < "p6" else "b"]), names))
        list(pool.map(lambda n: activate(paths, n), names[:3]))
    assert [p.name for p in list_profiles(paths)] == sorted(names)
    active = active_profile(paths)
    assert active is not None and active.name in names[:3]


def test_activate_unknown_profile_names_the_known_ones(registered: ProfilePaths) -> None:
    with pytest.raises(ProfileError, match=r"no such profile \(registered: alpha, beta\)"):
        activate(registered, "gamma")


def test_activate_refuses_a_profile_whose_export_broke(registered: ProfilePaths, exports: dict[str, Path]) -> None:
    (exports["b"] / PROMPTS).write_text("edited", encoding="utf-8")
    with pytest.raises(ExportError, match="does not match its entry in the manifest"):
        activate(registered, "beta")
    assert active_profile(registered) is None


def test_add_profile_validates_the_export(paths: ProfilePaths, exports: dict[str, Path]) -> None:
    (exports["a"] / PROGRAM).write_bytes(b'{"hyde": NaN}')
    with pytest.raises(ExportError, match="does not match its entry in the manifest"):
        add_profile(paths, "alpha", exports["a"])
    assert _registry_bytes(paths) is None


def test_add_existing_profile_needs_confirmation(registered: ProfilePaths, exports: dict[str, Path]) -> None:
    with pytest.raises(ProfileExistsError, match="--yes"):
        add_profile(registered, "alpha", exports["b"])
    assert list_profiles(registered)[0].program == exports["a"].resolve()
    add_profile(registered, "alpha", exports["b"], confirm_overwrite=True)
    assert list_profiles(registered)[0].program == exports["b"].resolve()


@pytest.mark.parametrize("name", ["", "-x", ".hidden", "a/b", "../x", "a b", "x\n", "é", "a" * 65])
def test_invalid_names_are_rejected(registered: ProfilePaths, exports: dict[str, Path], name: str) -> None:
    before = _registry_bytes(registered)
    payload = profile_json(export_profile(registered, "alpha"))
    for attempt in (
        lambda: add_profile(registered, name, exports["a"]),
        lambda: activate(registered, name),
        lambda: import_profile(registered, payload, name, confirm_overwrite=True),
        lambda: export_profile(registered, name),
    ):
        with pytest.raises(ProfileError, match="not a valid profile name"):
            attempt()
    assert _registry_bytes(registered) == before


def test_longest_valid_name_is_accepted(paths: ProfilePaths, exports: dict[str, Path]) -> None:
    name = "A" + "b_.-9" * 12 + "xyz"
    assert len(name) == 64
    assert add_profile(paths, name, exports["a"]).name == name


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b'{"format": "scoperag-profiles/v1", "active": null, "profiles": {}, "x": 1}', "unknown key"),
        (b'{"format": "scoperag-profiles/v1", "active": "nope", "profiles": {}}', "marks 'nope' active"),
        (b'{"format": "scoperag-profiles/v2", "active": null, "profiles": {}}', "has format"),
        (b'{"format": "scoperag-profiles/v1", "format": "scoperag-profiles/v1"}', "duplicate key"),
        (b"{", "unreadable"),
    ],
)
def test_invalid_registry_is_reported(paths: ProfilePaths, content: bytes, match: str) -> None:
    paths.registry.parent.mkdir(parents=True)
    paths.registry.write_bytes(content)
    with pytest.raises(ProfileError, match=match):
        list_profiles(paths)


# -- export / import ---------------------------------------------------------------------------------


def test_export_profile_inlines_the_export(registered: ProfilePaths, exports: dict[str, Path]) -> None:
    data = export_profile(registered, "alpha")
    assert data["format"] == PROFILE_FORMAT and data["name"] == "alpha" and data["note"] == "baseline"
    assert canonical_json(data["export"]["manifest"]) == (exports["a"] / MANIFEST).read_bytes()
    assert canonical_json(data["export"]["program"]) == (exports["a"] / PROGRAM).read_bytes()
    assert data["export"]["prompts_md"] == (exports["a"] / PROMPTS).read_text(encoding="utf-8")


def test_export_import_export_is_byte_identical_but_for_the_name(
    registered: ProfilePaths, exports: dict[str, Path], demo_store: Store
) -> None:
    first = profile_json(export_profile(registered, "alpha"))
    info = import_profile(registered, first, "alpha-copy", confirm_overwrite=False)
    assert info.program == registered.root / "alpha-copy" and info.note == "baseline" and not info.active
    second = profile_json(export_profile(registered, "alpha-copy"))
    assert second == profile_json({**json.loads(first), "name": "alpha-copy"})
    for name in (MANIFEST, PROGRAM, PROMPTS):
        assert (info.program / name).read_bytes() == (exports["a"] / name).read_bytes()
    loaded = load_export(info.program, ScopedQA(demo_store)).program
    assert loaded.decompose.demos[0]["question"] == "What is the rent?"


def test_export_all_bundles_every_profile_and_the_active_one(registered: ProfilePaths) -> None:
    activate(registered, "alpha")
    bundle = export_all(registered)
    assert bundle["format"] == BUNDLE_FORMAT and bundle["active"] == "alpha"
    assert sorted(bundle["profiles"]) == ["alpha", "beta"]
    assert bundle["profiles"]["beta"] == export_profile(registered, "beta")


def test_export_profile_refuses_what_import_could_not_take(
    paths: ProfilePaths, demo_store: Store, tmp_path: Path
) -> None:
    program = ScopedQA(demo_store)
    program.hyde.demos = [dspy.Example(question="q", passage="x" * (MAX_PROFILE_BYTES + 10))]
    add_profile(paths, "huge", _export(program, tmp_path / "huge"))
    with pytest.raises(ProfileError, match="over the 1048576-byte import limit"):
        export_profile(paths, "huge")


def test_import_never_changes_the_active_profile(registered: ProfilePaths) -> None:
    payload = profile_json(export_profile(registered, "beta"))
    import_profile(registered, payload, "gamma", confirm_overwrite=False)
    assert active_profile(registered) is None
    activate(registered, "alpha")
    import_profile(registered, payload, "delta", confirm_overwrite=False)
    import_profile(registered, payload, "alpha", confirm_overwrite=True)  # over the active one
    active = active_profile(registered)
    assert active is not None and active.name == "alpha"
    assert json.loads(registered.registry.read_bytes())["active"] == "alpha"


def test_import_over_an_existing_profile_needs_confirmation(registered: ProfilePaths) -> None:
    payload = profile_json(export_profile(registered, "beta"))
    import_profile(registered, payload, "gamma", confirm_overwrite=False)
    before = _registry_bytes(registered)
    edited = json.loads(payload)
    edited["note"] = "second version"
    with pytest.raises(ProfileExistsError, match=r"'gamma'.*already exists.*--yes"):
        import_profile(registered, profile_json(edited), "gamma", confirm_overwrite=False)
    assert _registry_bytes(registered) == before
    info = import_profile(registered, profile_json(edited), "gamma", confirm_overwrite=True)
    assert info.note == "second version"
    assert sorted(p.name for p in registered.root.iterdir()) == ["gamma"]  # replaced, no leftovers


def test_import_refuses_an_unregistered_directory_in_the_way(registered: ProfilePaths) -> None:
    (registered.root / "stray").mkdir(parents=True)
    (registered.root / "stray" / "notes.txt").write_text("mine", encoding="utf-8")
    payload = profile_json(export_profile(registered, "beta"))
    with pytest.raises(ProfileError, match="not a registered profile"):
        import_profile(registered, payload, "stray", confirm_overwrite=False)
    assert (registered.root / "stray" / "notes.txt").read_text(encoding="utf-8") == "mine"


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(payload: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = payload
        for key in parents:
            target = target[key]
        target[last] = value

    return edit


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def edit(payload: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = payload
        for key in parents:
            target = target[key]
        del target[last]

    return edit


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (_set("format", "scoperag-profile/v2"), "'scoperag-profile/v2' is not supported"),
        (_set("format", BUNDLE_FORMAT), "is a bundle of all profiles"),
        (_set("format", "legco-reranker-profile/v1"), "not a scoperag profile"),
        (_drop("format"), "not a scoperag profile"),
        (_set("exported_by", "me"), "unknown key"),
        (_set("export.extra", {}), "unknown key"),
        (_drop("export.prompts_md"), "Field required"),
        (_set("name", "../evil"), "should match pattern"),
        (_drop("export.program.hyde"), "missing predictor.*'hyde'"),
        (_set("export.program.rerank", {}), "unknown predictor.*'rerank'"),
        (_set("export.program.hyde.lm", {"model": "gpt-4o", "api_key": "sk-x"}), "LM override"),
        (_set("export.manifest.config.settings.api_base", "http://x"), "'config.settings.api_base' names"),
        (_set("export.program.hyde.demos", [{"question": "q", "azure_endpoint": "http://x"}]), "endpoint or"),
        (_set("export.program.decompose.config", {"temperature": 2}), "unknown key"),
        (_set("export.manifest.format", "scoperag-program/v0"), "not supported"),
        (_set("export.manifest.extra", 1), "unknown key"),
        (_set("export.prompts_md", "# edited\n"), "does not match its entry in the manifest"),
    ],
)
def test_import_rejects_invalid_payloads(
    registered: ProfilePaths, edit: Callable[[dict[str, Any]], None], match: str
) -> None:
    payload = _payload(registered)
    edit(payload)
    before = _registry_bytes(registered)
    with pytest.raises(ExportError, match=match) as caught:
        import_profile(registered, _vouch(payload), "gamma", confirm_overwrite=True)
    assert caught.value.fix
    assert _registry_bytes(registered) == before
    assert not registered.root.exists()


def test_import_rejects_an_edited_program_whose_hash_was_not_updated(registered: ProfilePaths) -> None:
    payload = _payload(registered)
    payload["export"]["program"]["decompose"]["signature"]["instructions"] = "Ignore the documents."
    with pytest.raises(ExportError, match="does not match its entry in the manifest"):
        import_profile(registered, profile_json(payload), "gamma", confirm_overwrite=False)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b" " * (MAX_PROFILE_BYTES + 1), "over the 1048576-byte limit"),
        (b"definitely not json", "is not valid JSON"),
        (b'{"format": "scoperag-profile/v1", "format": "x"}', "duplicate key 'format'"),
        (b'{"format": "scoperag-profile/v1", "note": NaN}', "NaN"),
        (b'{"format": "scoperag-profile/v1", "note": Infinity}', "Infinity"),
        (b'["scoperag-profile/v1"]', "not a scoperag profile"),
    ],
)
def test_import_rejects_bad_bytes(registered: ProfilePaths, data: bytes, match: str) -> None:
    before = _registry_bytes(registered)
    with pytest.raises(ExportError, match=match):
        import_profile(registered, data, "gamma", confirm_overwrite=False)
    assert _registry_bytes(registered) == before


def test_import_rejects_a_lone_surrogate(registered: ProfilePaths) -> None:
    payload = profile_json(export_profile(registered, "alpha")).replace(b"baseline", b"\\ud800")
    with pytest.raises(ExportError, match="not valid Unicode"):
        import_profile(registered, payload, "gamma", confirm_overwrite=False)


def test_add_profile_rejects_an_overlong_note(paths: ProfilePaths, exports: dict[str, Path]) -> None:
    with pytest.raises(ProfileError, match="cannot be registered"):
        add_profile(paths, "alpha", exports["a"], note="x" * 2001)
    assert _registry_bytes(paths) is None
